package rt_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// TestTuneOnViewKeepsViewValues: SpecConst.Tune on a view of a queue
// (Queue.WithSpec) hands its function a queue whose launches run with the
// view's values for the constants that the view gives, as the view's own
// launches do: the queue's values come before the context's.
func TestTuneOnViewKeepsViewValues(t *testing.T) {
	var warn bytes.Buffer
	ctx, _ := openTune(t, t.TempDir(), "", &warn, true)
	out := lsBuffer(t, ctx)
	v, err := ctx.Queue().WithSpec(lsBias.Of(5))
	if err != nil {
		t.Fatal(err)
	}
	if _, bias, err := lsRun(v, out, rt.Spec[int32]{}); err != nil || bias != 5 {
		t.Fatalf("a launch on the view ran with LBIAS=%d (%v); want 5", bias, err)
	}
	if wrong := tuneOnView(t, v, out); len(wrong) > 0 {
		t.Errorf("%d launches of the tuning function on a view ran with other values; the first: %s", len(wrong), wrong[0])
	}
	// The record of a tuning under the view's values is not the record
	// under the context's.
	if a, b := tuneRecordKey(v, &lsScale), tuneRecordKey(ctx.Queue(), &lsScale); string(a.SpecConsts) == string(b.SpecConsts) {
		t.Errorf("the tuning record of a view with LBIAS=5 has the key of the context's (LBIAS=0)")
	}
	// On a view that gives the constant tuned, the candidate takes the
	// place of the view's value.
	v2, err := ctx.Queue().WithSpec(lsScale.Of(6), lsBias.Of(5))
	if err != nil {
		t.Fatal(err)
	}
	if wrong := tuneOnView(t, v2, out); len(wrong) > 0 {
		t.Errorf("%d launches of the tuning function on a view of LSCALE ran with other values; the first: %s", len(wrong), wrong[0])
	}
}

// tuneOnView tunes LSCALE on the view v, whose LBIAS is 5, and returns
// each launch of the tuning function that ran with a value other than its
// candidate's LSCALE and the view's LBIAS.
func tuneOnView(t *testing.T, v *rt.Queue, out rt.Buffer[int32]) (wrong []string) {
	t.Helper()
	_, err := lsScale.Tune(v, func(q *rt.Queue, s int32) error {
		scale, bias, err := lsRun(q, out, rt.Spec[int32]{})
		if err != nil {
			return err
		}
		if scale != s || bias != 5 {
			wrong = append(wrong, fmt.Sprintf("LSCALE=%d LBIAS=%d, want %d and the view's 5", scale, bias, s))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return wrong
}

// TestQueueReleaseDropsViewInstances: Release of a queue gives back the
// kernel instances parked on its views (WithSpec) as it gives back its
// own: a service that makes a queue and a view per request and releases
// the queue holds no more instances after a hundred requests than after
// one.
func TestQueueReleaseDropsViewInstances(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{})
	out := lsBuffer(t, ctx)
	request := func() {
		q, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			t.Fatal(err)
		}
		v, err := q.WithSpec(lsBias.Of(5))
		if err != nil {
			t.Fatal(err)
		}
		if _, bias, err := lsRun(v, out, rt.Spec[int32]{}); err != nil || bias != 5 {
			t.Fatalf("a launch on the view ran with LBIAS=%d (%v); want 5", bias, err)
		}
		if err := q.Release(); err != nil {
			t.Fatal(err)
		}
	}
	request()
	held := core.Instances(cx(ctx))
	for range 20 {
		request()
	}
	if n := core.Instances(cx(ctx)); n != held {
		t.Errorf("%d kernel instances after 20 more requests, want %d: the released queues' views keep theirs", n, held)
	}
}
