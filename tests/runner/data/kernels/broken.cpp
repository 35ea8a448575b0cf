// Test C++ kernel that does not compile (undeclared identifier).
#include <ATen/ATen.h>

at::Tensor run(const at::Tensor& a) { return a + undeclared_thing; }
