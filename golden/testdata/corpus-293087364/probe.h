// The probe's header: a device global in a macro body, one in a helper.
#define DGEN_SCALED(x) ((x) * DgenScale)
float dgen_bias(void) { return DgenBias; }
