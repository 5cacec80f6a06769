package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// Clusters is k, the number of clusters, a macro of kmeans.cl.
//
//dgen:specconst
var Clusters rt.SpecConst[int32]

// Changed counts the points that changed cluster in an assignment.
//
//dgen:global
var Changed rt.DeviceGlobal[uint32]

// KMeans is the image of kmeans.cl.
//
//dgen:program source=kmeans.cl
var KMeans rt.Program

// Assign gives each of N points its nearest centroid.
//
//dgen:kernel program=KMeans name=kmeans_assign
type Assign struct {
	Membership rt.Buffer[int32] `dgen:"out"`
	Xs, Ys     rt.Buffer[float32]
	Centroids  rt.Buffer[float32]
	Previous   rt.Buffer[int32]
	N          int32
}

// Recenter computes each cluster's mean; launch it with one work-group of
// updateGroup work-items per cluster.
//
//dgen:kernel program=KMeans name=kmeans_update
type Recenter struct {
	Centroids  rt.Buffer[float32] `dgen:"out"`
	Xs, Ys     rt.Buffer[float32]
	Membership rt.Buffer[int32]
	Previous   rt.Buffer[float32]
	N          int32
	SX, SY     rt.Local[float32]
	Count      rt.Local[int32]
}

// The first centroids and memberships of a run.
//
//dgen:alloc
var centroidSite rt.AllocSite[float32]

//dgen:alloc
var membershipSite rt.AllocSite[int32]

const (
	updateGroup = 256 // work-items per cluster in kmeans_update (a power of two)
	kmeansMax   = 50  // iterations at most
)

// kmeans clusters Size.N 2-D points into Size.K clusters (Accelerate's
// kmeans: the first K points are the first centroids; iterate until no
// point changes cluster), allocating memberships and centroids in every
// iteration.
var kmeans = Program{
	Name:   "kmeans",
	Source: "accelerate/kmeans/kmeans.fut",
	Datasets: []Dataset{
		{Name: "k5_n50000", Futhark: 1.27, GPU: Size{N: 50_000, K: 5}, Small: Size{N: 50_000, K: 5}},
		{Name: "k5_n200000", Futhark: 1.10, GPU: Size{N: 200_000, K: 5}, Small: Size{N: 200_000, K: 5}},
	},
	Test: Size{N: 5000, K: 5},
	New:  newKMeans,
}

type kmeansCase struct {
	e          *Env
	xs, ys     []float32
	k          int
	dXs, dYs   rt.Buffer[float32]
	centroids  rt.Buffer[float32]
	membership rt.Buffer[int32]
	iters      int
}

func newKMeans(e *Env, s Size, seed uint64) (Case, error) {
	r := rand.New(rand.NewPCG(seed, 0x6ea5))
	c := &kmeansCase{e: e, k: s.K, xs: make([]float32, s.N), ys: make([]float32, s.N)}
	// Points around 2K centres, so that clusters are not trivially the
	// generating blobs.
	cx, cy := make([]float64, 2*s.K), make([]float64, 2*s.K)
	for i := range cx {
		cx[i], cy[i] = 100*r.Float64(), 100*r.Float64()
	}
	for i := range s.N {
		b := r.IntN(len(cx))
		c.xs[i] = float32(cx[b] + 5*r.NormFloat64())
		c.ys[i] = float32(cy[b] + 5*r.NormFloat64())
	}
	if err := Clusters.Set(e.Ctx, int32(s.K)); err != nil {
		return nil, err
	}
	var err error
	if c.dXs, err = upload(e, c.xs); err != nil {
		return nil, err
	}
	if c.dYs, err = upload(e, c.ys); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *kmeansCase) Run() error {
	if err := free(c.centroids, c.membership); err != nil {
		return err
	}
	e, n := c.e, len(c.xs)
	var err error
	c.membership, c.centroids = rt.Buffer[int32]{}, rt.Buffer[float32]{}
	if c.centroids, err = alloc(e, &centroidSite, 2*c.k); err != nil {
		return err
	}
	if c.membership, err = alloc(e, &membershipSite, n); err != nil {
		return err
	}
	if err := errors.Join(c.centroids.Write(e.Q, c.initial()), c.membership.Fill(e.Q, -1)); err != nil {
		return err
	}
	for c.iters = 1; c.iters <= kmeansMax; c.iters++ {
		if err := Changed.Write(e.Q, 0); err != nil {
			return err
		}
		as := Assign{Xs: c.dXs, Ys: c.dYs, Centroids: c.centroids, Previous: c.membership, N: int32(n)}
		if err := allocOut(e, as.AllocMembership, &as.Membership, n); err != nil {
			return err
		}
		err := as.Enqueue(e.Q, rt.Range1(n))
		err = errors.Join(err, c.membership.Free())
		c.membership = as.Membership
		if err != nil {
			return err
		}
		re := Recenter{Xs: c.dXs, Ys: c.dYs, Membership: c.membership, Previous: c.centroids, N: int32(n),
			SX: rt.Local[float32]{Len: updateGroup}, SY: rt.Local[float32]{Len: updateGroup}, Count: rt.Local[int32]{Len: updateGroup}}
		if err := allocOut(e, re.AllocCentroids, &re.Centroids, 2*c.k); err != nil {
			return err
		}
		err = re.Enqueue(e.Q, rt.Range1(c.k*updateGroup).WithLocal(updateGroup))
		err = errors.Join(err, c.centroids.Free())
		c.centroids = re.Centroids
		if err != nil {
			return err
		}
		changed, err := readFlag(e, &Changed)
		if err != nil {
			return err
		}
		if changed == 0 {
			return nil
		}
	}
	return nil
}

// initial returns the first centroids: the first K points.
func (c *kmeansCase) initial() []float32 {
	cs := make([]float32, 2*c.k)
	for i := range c.k {
		cs[2*i], cs[2*i+1] = c.xs[i], c.ys[i]
	}
	return cs
}

// nearest returns the nearest and second nearest squared distance of
// (x, y) to cs, and the nearest's index.
func nearest(x, y float64, cs []float64) (best int, d0, d1 float64) {
	d0, d1 = math.Inf(1), math.Inf(1)
	for j := 0; j < len(cs); j += 2 {
		d := (x-cs[j])*(x-cs[j]) + (y-cs[j+1])*(y-cs[j+1])
		if d < d0 {
			best, d0, d1 = j/2, d, d0
		} else if d < d1 {
			d1 = d
		}
	}
	return best, d0, d1
}

// Verify runs the reference in float64 from the same first centroids and
// compares centroids (relative 1e-4) and memberships, where a point that
// is nearly equidistant from two centroids (1e-4 relative) may go either
// way.
func (c *kmeansCase) Verify() error {
	got, err := download(c.e, c.centroids)
	if err != nil {
		return err
	}
	member, err := download(c.e, c.membership)
	if err != nil {
		return err
	}
	cs := make([]float64, 2*c.k)
	for i, v := range c.initial() {
		cs[i] = float64(v)
	}
	ref := make([]int32, len(c.xs))
	for i := range ref {
		ref[i] = -1
	}
	for range kmeansMax {
		sum, count := make([]float64, 2*c.k), make([]int, c.k)
		changed := 0
		for i := range ref {
			b, _, _ := nearest(float64(c.xs[i]), float64(c.ys[i]), cs)
			if int32(b) != ref[i] {
				changed++
				ref[i] = int32(b)
			}
			sum[2*b] += float64(c.xs[i])
			sum[2*b+1] += float64(c.ys[i])
			count[b]++
		}
		for j := range c.k {
			if count[j] > 0 {
				cs[2*j], cs[2*j+1] = sum[2*j]/float64(count[j]), sum[2*j+1]/float64(count[j])
			}
		}
		if changed == 0 {
			break
		}
	}
	want := make([]float32, len(cs))
	for i, v := range cs {
		want[i] = float32(v)
	}
	if err := near("centroids", got, want, 1e-3, 1e-4); err != nil {
		return err
	}
	for i, m := range member {
		if m == ref[i] {
			continue
		}
		if _, d0, d1 := nearest(float64(c.xs[i]), float64(c.ys[i]), cs); d1-d0 > 1e-4*d0 {
			return fmt.Errorf("%w (the point is %g and %g from its two nearest centroids)", mismatch("membership", i, m, ref[i]), d0, d1)
		}
	}
	return nil
}

func (c *kmeansCase) Close() error {
	return free(c.dXs, c.dYs, c.centroids, c.membership)
}
