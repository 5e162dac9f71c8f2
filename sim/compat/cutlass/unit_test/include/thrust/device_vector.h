// thrust::device_vector for host-compiled CUTLASS tests: global memory is host memory here.
#pragma once

#include <vector>

namespace thrust {
template <class T, class Alloc = std::allocator<T>>
using device_vector = std::vector<T, Alloc>;
}  // namespace thrust
