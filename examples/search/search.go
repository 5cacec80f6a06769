package main

import (
	"context"
	"fmt"

	"github.com/dgen-go/dgen/rt"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Search is the device image: search.cl.
//
//dgen:program source=search.cl
var Search rt.Program

// Dim is the length of an index's vectors. Each index gives its own with
// every launch (Scores.Dim); the context's value, Dim.Set's, is only for
// launches that give none, and this program has none.
//
//dgen:specconst default=64 min=1 max=4096
var Dim rt.SpecConst[int32]

// Scores scores every base vector of an index against a query. Dim is no
// kernel argument: it is the launch's own value of the constant Dim.
//
//dgen:kernel program=Search name=scores
type Scores struct {
	Base  rt.Buffer[float32]
	Query rt.Buffer[float32]
	Score rt.Buffer[float32]
	Dim   rt.Spec[int32] `dgen:"spec"`
}

// querySite and scoreSite are where a query allocates its two buffers.
//
//dgen:alloc
var querySite rt.AllocSite[float32]

//dgen:alloc
var scoreSite rt.AllocSite[float32]

// Index is n vectors of one length, dim, on the device: a brute-force
// nearest-neighbour index by dot product. Any number of goroutines may
// query it at once, each on a queue of its own.
type Index struct {
	dim, n int
	base   rt.Buffer[float32]
}

// NewIndex copies vecs, every one of length dim, to the device.
func NewIndex(q *rt.Queue, dim int, vecs [][]float32) (*Index, error) {
	flat := make([]float32, 0, dim*len(vecs))
	for i, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("new index: vector %d has %d elements, not %d", i, len(v), dim)
		}
		flat = append(flat, v...)
	}
	base, err := rt.NewBuffer[float32](q.Context(), len(flat))
	if err != nil {
		return nil, err
	}
	if err := base.Write(q, flat); err != nil {
		base.Free()
		return nil, err
	}
	return &Index{dim: dim, n: len(vecs), base: base}, nil
}

// Nearest returns the index of the vector with the largest dot product
// with query, and that product. It is NearestContext without a bound.
func (ix *Index) Nearest(q *rt.Queue, query []float32) (int, float32, error) {
	return ix.NearestContext(context.Background(), q, query)
}

// NearestContext is Nearest, bounded by ctx: past the context's
// Config.MemoryLimit it waits for memory until ctx is done, and then
// fails with an error wrapping rt.ErrMemoryLimit; it waits for the device
// until then too. A query whose length is not the index's is an error
// wrapping rt.ErrInvalidArgument.
func (ix *Index) NearestContext(ctx context.Context, q *rt.Queue, query []float32) (int, float32, error) {
	if len(query) != ix.dim {
		return 0, 0, fmt.Errorf("nearest: %w: query of %d elements in an index of %d", rt.ErrInvalidArgument, len(query), ix.dim)
	}
	qb, err := querySite.AllocContext(ctx, q, ix.dim)
	if err != nil {
		return 0, 0, err
	}
	defer qb.Free()
	sb, err := scoreSite.AllocContext(ctx, q, ix.n)
	if err != nil {
		return 0, 0, err
	}
	defer sb.Free()
	if err := qb.WriteContext(ctx, q, query); err != nil {
		return 0, 0, err
	}
	s := Scores{Base: ix.base, Query: qb, Score: sb, Dim: Dim.Of(int32(ix.dim))}
	if err := s.EnqueueContext(ctx, q, rt.Range1(ix.n)); err != nil {
		return 0, 0, err
	}
	scores := make([]float32, ix.n)
	if err := sb.ReadContext(ctx, q, scores); err != nil {
		return 0, 0, err
	}
	best := 0
	for i, v := range scores {
		if v > scores[best] {
			best = i
		}
	}
	return best, scores[best], nil
}

// Free frees the index's vectors.
func (ix *Index) Free() error { return ix.base.Free() }
