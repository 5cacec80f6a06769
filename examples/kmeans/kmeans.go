package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/dgen-go/dgen/rt"
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// KMeans is the device image: kmeans.cl.
//
//dgen:program source=kmeans.cl
var KMeans rt.Program

// D is the number of coordinates of a point: a specialization constant,
// which a request gives once for all of its launches (Queue.WithSpec).
//
//dgen:specconst default=16 min=1 max=64
var D rt.SpecConst[int32]

// K is the number of clusters, a specialization constant as D is.
//
//dgen:specconst default=8 min=1 max=32
var K rt.SpecConst[int32]

// Assign labels each point with its nearest centroid.
//
//dgen:kernel program=KMeans name=assign
type Assign struct {
	Points    rt.Buffer[int32]
	Centroids rt.Buffer[int32]
	Labels    rt.Buffer[int32]
	N         int32
}

// Accumulate sums each cluster's points and counts them.
//
//dgen:kernel program=KMeans name=accumulate
type Accumulate struct {
	Points rt.Buffer[int32]
	Labels rt.Buffer[int32]
	Acc    rt.Buffer[int32]
	N      int32
}

// Update moves each centroid to the mean of its cluster.
//
//dgen:kernel program=KMeans name=update
type Update struct {
	Acc       rt.Buffer[int32]
	Centroids rt.Buffer[int32]
}

// jobSite is where a job allocates its buffers.
//
//dgen:alloc
var jobSite rt.AllocSite[int32]

// MaxCoord is the largest coordinate a point may have. With D at most 64
// and a job of at most MaxPoints points, no distance or sum overflows an
// int32.
const (
	MaxCoord  = 1<<10 - 1
	MaxPoints = 1 << 21
)

// group is the work-group size of assign and accumulate.
const group = 64

// Shape is a variant of the program: points of D coordinates in K
// clusters.
type Shape struct{ D, K int }

// spec returns the values of s's constants.
func (s Shape) spec() []rt.SpecValue { return []rt.SpecValue{D.Of(int32(s.D)), K.Of(int32(s.K))} }

// Job is one request: points of Shape.D coordinates each, flat, every
// coordinate in [0, MaxCoord]; Shape.K initial centroids, flat; and the
// iterations to run, at least one.
type Job struct {
	Shape
	Points, Init []int32
	Iters        int
}

// Result is a job's clusters: each point's label and the centroids.
type Result struct{ Labels, Centroids []int32 }

// Service clusters the jobs of concurrent requests. Each shape it serves
// has its program built and one iteration recorded as a graph before the
// first request; every request launches that graph with buffers of its
// own, on a queue of its own.
type Service struct {
	gpu    *rt.Context
	max    int      // the most points of a job
	r      rt.Range // assign's and accumulate's range, for max points
	shapes map[Shape]*iteration
}

// iteration is a shape's recorded iteration and its parameters.
type iteration struct {
	g                              *rt.Graph
	points, centroids, labels, acc *rt.GraphBuffer[int32]
	assignN, accumulateN           *rt.GraphValue[int32]
}

// buffers are a job's device memory, sized for the service's most points.
type buffers struct {
	points, centroids, labels, acc rt.Buffer[int32]
}

// NewService builds the program of each shape and records its iteration,
// within ctx, for jobs of up to maxPoints points.
func NewService(ctx context.Context, gpu *rt.Context, maxPoints int, shapes ...Shape) (*Service, error) {
	if maxPoints < 1 || maxPoints > MaxPoints {
		return nil, fmt.Errorf("kmeans: %w: %d points at most, not in [1, %d]", rt.ErrInvalidArgument, maxPoints, MaxPoints)
	}
	s := &Service{gpu: gpu, max: maxPoints, shapes: make(map[Shape]*iteration),
		r: rt.Range1((maxPoints + group - 1) / group * group).WithLocal(group)}
	for _, sh := range shapes {
		it, err := s.record(ctx, sh)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.shapes[sh] = it
	}
	return s, nil
}

// record builds shape sh's variant within ctx and records one iteration
// of it, with its buffers and the number of points (N, argument 3 of
// assign and accumulate) as parameters.
func (s *Service) record(ctx context.Context, sh Shape) (*iteration, error) {
	if err := KMeans.Build(ctx, s.gpu, sh.spec()...); err != nil {
		return nil, err
	}
	q, err := s.gpu.Queue().WithSpec(sh.spec()...)
	if err != nil {
		return nil, err
	}
	var b buffers
	defer b.free() // the graph's parameters stand for them
	if err := s.alloc(ctx, q, &b, sh); err != nil {
		return nil, err
	}
	var nodes [4]*rt.GraphNode
	g, err := q.Record(fmt.Sprintf("kmeans D=%d K=%d", sh.D, sh.K), func(q *rt.Queue) (err error) {
		for i, cmd := range b.iteration(s, sh, 0) {
			if nodes[i], err = q.Node(cmd); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	it := &iteration{g: g}
	var errs [6]error
	it.points, errs[0] = rt.BufferParam(g, b.points)
	it.centroids, errs[1] = rt.BufferParam(g, b.centroids)
	it.labels, errs[2] = rt.BufferParam(g, b.labels)
	it.acc, errs[3] = rt.BufferParam(g, b.acc)
	it.assignN, errs[4] = rt.ValueParam[int32](nodes[0], 3)
	it.accumulateN, errs[5] = rt.ValueParam[int32](nodes[2], 3)
	if err := errors.Join(errs[:]...); err != nil {
		g.Release()
		return nil, err
	}
	return it, nil
}

// Cluster runs job j within ctx: its queue stops taking its commands once
// ctx is done.
func (s *Service) Cluster(ctx context.Context, j Job) (*Result, error) {
	return s.cluster(ctx, j, nil)
}

// cluster is Cluster, its iterations launched by run where it is not nil
// (bench.go's plain launches), else by the shape's graph.
func (s *Service) cluster(ctx context.Context, j Job, run func(q *rt.Queue, b *buffers, j Job) error) (*Result, error) {
	it, err := s.check(j)
	if err != nil {
		return nil, err
	}
	q, err := s.gpu.AcquireQueueContext(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer s.gpu.ReleaseQueue(q)
	var b buffers
	defer b.free()
	if err := s.alloc(ctx, q, &b, j.Shape); err != nil {
		return nil, err
	}
	if err := errors.Join(b.points.Write(q, j.Points), b.centroids.Write(q, j.Init)); err != nil {
		return nil, err
	}
	if run != nil {
		err = run(q, &b, j)
	} else {
		n := int32(len(j.Points) / j.D)
		bind := []rt.Binding{it.points.Bind(b.points), it.centroids.Bind(b.centroids), it.labels.Bind(b.labels),
			it.acc.Bind(b.acc), it.assignN.Bind(n), it.accumulateN.Bind(n)}
		for range j.Iters {
			if err = it.g.LaunchWith(q, bind); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Labels: make([]int32, len(j.Points)/j.D), Centroids: make([]int32, len(j.Init))}
	if err := errors.Join(b.labels.Read(q, res.Labels), b.centroids.Read(q, res.Centroids)); err != nil {
		return nil, err
	}
	return res, nil
}

// check returns the iteration of j's shape, or an error wrapping
// rt.ErrInvalidArgument that says what is wrong with j.
func (s *Service) check(j Job) (*iteration, error) {
	it := s.shapes[j.Shape]
	n := len(j.Points) / max(j.D, 1)
	switch {
	case it == nil:
		return nil, fmt.Errorf("kmeans: %w: shape %+v is not served", rt.ErrInvalidArgument, j.Shape)
	case n < 1 || n > s.max || n*j.D != len(j.Points):
		return nil, fmt.Errorf("kmeans: %w: %d coordinates are not 1 to %d points of %d", rt.ErrInvalidArgument, len(j.Points), s.max, j.D)
	case len(j.Init) != j.K*j.D:
		return nil, fmt.Errorf("kmeans: %w: %d initial coordinates, not %d centroids of %d", rt.ErrInvalidArgument, len(j.Init), j.K, j.D)
	case j.Iters < 1:
		return nil, fmt.Errorf("kmeans: %w: %d iterations", rt.ErrInvalidArgument, j.Iters)
	}
	var bits int32 // every coordinate's, or'd: MaxCoord+1 is a power of 2
	for _, c := range j.Points {
		bits |= c
	}
	if bits&^MaxCoord != 0 {
		i := slices.IndexFunc(j.Points, func(c int32) bool { return c < 0 || c > MaxCoord })
		return nil, fmt.Errorf("kmeans: %w: coordinate %d of point %d is %d, not in [0, %d]", rt.ErrInvalidArgument, i%j.D, i/j.D, j.Points[i], MaxCoord)
	}
	return it, nil
}

// alloc allocates b for a job of shape sh on q.
func (s *Service) alloc(ctx context.Context, q *rt.Queue, b *buffers, sh Shape) (err error) {
	for _, a := range []struct {
		buf *rt.Buffer[int32]
		n   int
	}{{&b.points, s.max * sh.D}, {&b.centroids, sh.K * sh.D}, {&b.labels, s.max}, {&b.acc, sh.K * (sh.D + 1)}} {
		if *a.buf, err = jobSite.AllocContext(ctx, q, a.n); err != nil {
			return err
		}
	}
	return nil
}

// iteration returns the commands of one iteration over b's first n
// points, for a job of shape sh: assign, zero the sums, accumulate,
// update.
func (b *buffers) iteration(s *Service, sh Shape, n int32) [4]func(q *rt.Queue) error {
	return [4]func(q *rt.Queue) error{
		func(q *rt.Queue) error {
			return (&Assign{Points: b.points, Centroids: b.centroids, Labels: b.labels, N: n}).Enqueue(q, s.r)
		},
		func(q *rt.Queue) error { return b.acc.Fill(q, 0) },
		func(q *rt.Queue) error {
			return (&Accumulate{Points: b.points, Labels: b.labels, Acc: b.acc, N: n}).Enqueue(q, s.r)
		},
		func(q *rt.Queue) error {
			return (&Update{Acc: b.acc, Centroids: b.centroids}).Enqueue(q, rt.Range1(sh.K*sh.D))
		},
	}
}

// free frees b; the zero Buffer's Free does nothing.
func (b *buffers) free() error {
	return errors.Join(b.points.Free(), b.centroids.Free(), b.labels.Free(), b.acc.Free())
}

// Close releases the service's graphs.
func (s *Service) Close() error {
	var err error
	for _, it := range s.shapes {
		err = errors.Join(err, it.g.Release())
	}
	return err
}
