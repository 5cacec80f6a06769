#define ONE 1
