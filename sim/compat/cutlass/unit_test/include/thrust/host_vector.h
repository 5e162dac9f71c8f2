// thrust::host_vector for host-compiled CUTLASS tests: a std::vector.
#pragma once

#include <vector>

namespace thrust {
template <class T, class Alloc = std::allocator<T>>
using host_vector = std::vector<T, Alloc>;
}  // namespace thrust
