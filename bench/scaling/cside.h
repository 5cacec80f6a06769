int sc_open(int cuda, int cpu, const char *src, int n);
double sc_run(int mode, int g, double window_ns, long *counts, float *lat, int cap);
