package main

import (
	"time"

	"github.com/dgen-go/dgen/rt"
)

// The spec family: what a launch that gives its own specialization-
// constant value costs once its variant is built and its instance parked
// (issue 44's bound: 1.05× a plain launch), against a plain launch of the
// same kernel. Each way launches the 256-item kernel bump back to back
// with no event, as the hotspot family's swap way launches Hotspot, and
// drains the queue at the end: on a GPU the host's path sets the pace.

// bumpItems is the work-items of a bump launch.
const bumpItems = 256

// bumpLoop launches bump n times: plain (the context's Add), with its own
// Add (vals[0]), or alternating between the values of vals.
type bumpLoop struct {
	g    *grid
	p    rt.Buffer[int32]
	vals []int32 // nil: the plain way
}

// specFamily returns the spec family on g's context and queue.
func specFamily(name string, g *grid) (family, error) {
	p, err := rt.NewBuffer[int32](g.ctx, bumpItems)
	if err != nil {
		return family{}, err
	}
	return family{name, []way{
		{"plain", bumpLoop{g: g, p: p}},
		{"spec", bumpLoop{g: g, p: p, vals: []int32{2}}},
		{"spec-alt", bumpLoop{g: g, p: p, vals: []int32{2, 3}}},
	}}, nil
}

func (l bumpLoop) steps(n int) (float64, error) {
	q, r := l.g.q, rt.Range1(bumpItems)
	start := time.Now()
	if l.vals == nil {
		b := Bump{P: l.p}
		for range n {
			if err := b.Enqueue(q, r); err != nil {
				return 0, err
			}
		}
	} else {
		specs := make([]rt.Spec[int32], len(l.vals))
		for i, v := range l.vals {
			specs[i] = Add.Of(v)
		}
		b := BumpAdd{P: l.p}
		for i := range n {
			b.Add = specs[i%len(specs)]
			if err := b.Enqueue(q, r); err != nil {
				return 0, err
			}
		}
	}
	err := q.Finish()
	return perStep(start, n), err
}
