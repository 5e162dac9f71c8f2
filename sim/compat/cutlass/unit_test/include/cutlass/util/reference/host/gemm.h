// CUTLASS's tools/util host reference GEMM: the pipeline tests include it but call nothing of it.
#pragma once
