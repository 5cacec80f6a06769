#ifndef WIDTH
#error WIDTH must be defined, with -DWIDTH=n
#endif
