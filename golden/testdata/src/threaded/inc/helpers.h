#ifndef HELPERS_H
#define HELPERS_H
// SCALED reads the device global Scale where it expands.
#define SCALED(x) ((x) * Scale)
// shift reads the device global Offset.
float shift(float x) { return x + (float)Offset; }
#endif
