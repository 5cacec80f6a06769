package opencl

// CommandBufferEnv names the variable that turns OpenCL command buffers
// off: with DGEN_OPENCL_COMMAND_BUFFER=0 a graph replays as a loop of
// enqueues in C even on a device with cl_khr_command_buffer.
const CommandBufferEnv = "DGEN_OPENCL_COMMAND_BUFFER"
