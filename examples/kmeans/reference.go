package main

import (
	"math/rand/v2"
	"slices"
)

// Reference runs job j in Go, as the kernels do, in integers: the result
// that the device's must equal exactly.
func Reference(j Job) Result {
	n := len(j.Points) / j.D
	res := Result{Labels: make([]int32, n), Centroids: slices.Clone(j.Init)}
	for range j.Iters {
		acc := make([]int32, j.K*(j.D+1))
		for i := range n {
			p := j.Points[i*j.D : (i+1)*j.D]
			best, bestd := 0, int32(1<<31-1)
			for k := range j.K {
				var d int32
				for x, c := range res.Centroids[k*j.D : (k+1)*j.D] {
					d += (p[x] - c) * (p[x] - c)
				}
				if d < bestd {
					best, bestd = k, d
				}
			}
			res.Labels[i] = int32(best)
			row := acc[best*(j.D+1) : (best+1)*(j.D+1)]
			for x, c := range p {
				row[x] += c
			}
			row[j.D]++
		}
		for i := range res.Centroids {
			row := acc[i/j.D*(j.D+1):]
			if count := row[j.D]; count > 0 {
				res.Centroids[i] = row[i%j.D] / count
			}
		}
	}
	return res
}

// NewJob returns a job of n points of shape sh around sh.K random
// centres, the first sh.K points its initial centroids, from seed; n is
// at least sh.K.
func NewJob(sh Shape, n, iters int, seed uint64) Job {
	r := rand.New(rand.NewPCG(seed, 55))
	centres := make([]int32, sh.K*sh.D)
	for i := range centres {
		centres[i] = r.Int32N(MaxCoord + 1)
	}
	j := Job{Shape: sh, Points: make([]int32, n*sh.D), Iters: iters}
	for i := range n {
		c := centres[r.IntN(sh.K)*sh.D:][:sh.D]
		for x := range sh.D {
			j.Points[i*sh.D+x] = min(max(c[x]+int32(r.NormFloat64()*60), 0), MaxCoord)
		}
	}
	j.Init = slices.Clone(j.Points[:sh.K*sh.D])
	return j
}
