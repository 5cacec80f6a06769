__kernel void m(__global float* a) { a[0] = TestOnly + Empty[0] + EmptyField.X; }
