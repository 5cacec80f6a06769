//go:build unix && cgo

package sigsave

/*
#include <signal.h>
#include <string.h>

#ifndef NSIG
#define NSIG 65
#endif

static struct sigaction dgen_saved[NSIG];
static void *dgen_go_handler;

static void *dgen_handler(const struct sigaction *a) {
	return (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;
}

// dgen_sig_init records Go's handler: the one on SIGURG, which Go
// installs at start-up in every program (it preempts goroutines with it).
static void dgen_sig_init(void) {
	struct sigaction a;
	if (sigaction(SIGURG, NULL, &a) == 0 && dgen_handler(&a) != (void *)SIG_DFL && dgen_handler(&a) != (void *)SIG_IGN)
		dgen_go_handler = dgen_handler(&a);
}

static void dgen_sig_save(void) {
	for (int s = 1; s < NSIG; s++)
		if (sigaction(s, NULL, &dgen_saved[s]) != 0)
			memset(&dgen_saved[s], 0, sizeof dgen_saved[s]);
}

// dgen_sig_restore puts back every action that differs from the saved one,
// but those that Go set to its handler meanwhile; it returns how many it
// put back.
static int dgen_sig_restore(void) {
	int n = 0;
	for (int s = 1; s < NSIG; s++) {
		struct sigaction cur;
		if (s == SIGKILL || s == SIGSTOP || sigaction(s, NULL, &cur) != 0)
			continue;
		void *h = dgen_handler(&cur);
		if (h == dgen_handler(&dgen_saved[s]) && cur.sa_flags == dgen_saved[s].sa_flags)
			continue;
		if (h != NULL && h == dgen_go_handler && dgen_handler(&dgen_saved[s]) != h)
			continue;
		if (sigaction(s, &dgen_saved[s], NULL) == 0)
			n++;
	}
	return n;
}
*/
import "C"

func init() { C.dgen_sig_init() }

func save() { C.dgen_sig_save() }

// restored counts the actions put back, for tests.
var restored int

func restore() { restored += int(C.dgen_sig_restore()) }
