// The kernel of examples/stencil, included so that bench/inproc launches
// the same source as the example and rawcl (dgen inlines the header into
// the generated device image).
#include "hotspot.cl"
