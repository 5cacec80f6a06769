package main

import (
	"errors"
	"math"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// Over is raised by a BFS level that reached a new node.
//
//dgen:global
var Over rt.DeviceGlobal[int32]

// BFS is the image of bfs.cl.
//
//dgen:program source=bfs.cl
var BFS rt.Program

// Expand marks in Updating the unvisited neighbours of Frontier and sets
// their cost.
//
//dgen:kernel program=BFS name=bfs_expand
type Expand struct {
	Updating rt.Buffer[uint8] `dgen:"out"`
	Start    rt.Buffer[int32]
	Degree   rt.Buffer[int32]
	Edges    rt.Buffer[int32]
	Frontier rt.Buffer[uint8]
	Visited  rt.Buffer[uint8]
	Cost     rt.Buffer[int32]
	N        int32
}

// Update makes Updating the Next frontier and marks it visited.
//
//dgen:kernel program=BFS name=bfs_update
type Update struct {
	Next     rt.Buffer[uint8] `dgen:"out"`
	Updating rt.Buffer[uint8]
	Visited  rt.Buffer[uint8]
	N        int32
}

// The per-run arrays of BFS.
//
//dgen:alloc
var visitedSite rt.AllocSite[uint8]

//dgen:alloc
var costSite rt.AllocSite[int32]

//dgen:alloc
var frontierSite rt.AllocSite[uint8]

// bfs computes the BFS level of every node of a random graph of Size.N
// nodes and on average Size.M edges per node from node 0; Size.K = 1 draws
// degrees of high variance. Each level allocates two node arrays.
var bfs = Program{
	Name:   "bfs",
	Source: "rodinia/bfs/bfs_parallel_mapwrite.fut",
	Datasets: []Dataset{
		{Name: "4096nodes", Futhark: 2.03, GPU: Size{N: 4096, M: 6}, Small: Size{N: 4096, M: 6}},
		{Name: "graph1MW_6", Futhark: 1.04, GPU: Size{N: 1_000_000, M: 6}, Small: Size{N: 1 << 16, M: 6}},
		{Name: "512nodes_high_edge_variance", Futhark: 2.93, GPU: Size{N: 512, M: 24, K: 1}, Small: Size{N: 512, M: 24, K: 1}},
	},
	Test: Size{N: 3000, M: 4},
	New:  newBFS,
}

type bfsCase struct {
	e                    *Env
	start, degree, edges []int32
	dStart, dDeg, dEdges rt.Buffer[int32]
	cost                 rt.Buffer[int32]
	levels               int
}

// graph returns a random directed graph in Rodinia's layout: node i's
// edges are edges[start[i]:start[i]+degree[i]].
func graph(s Size, seed uint64) (start, degree, edges []int32) {
	r := rand.New(rand.NewPCG(seed, 0xbf5))
	start, degree = make([]int32, s.N), make([]int32, s.N)
	for i := range s.N {
		d := 1 + r.IntN(2*s.M)
		if s.K == 1 { // log-normal degrees: a few hubs
			d = min(s.N, 1+int(float64(s.M)/3*math.Exp(1.5*r.NormFloat64())))
		}
		start[i], degree[i] = int32(len(edges)), int32(d)
		for range d {
			edges = append(edges, int32(r.IntN(s.N)))
		}
	}
	return start, degree, edges
}

func newBFS(e *Env, s Size, seed uint64) (Case, error) {
	c := &bfsCase{e: e}
	c.start, c.degree, c.edges = graph(s, seed)
	var err error
	if c.dStart, err = upload(e, c.start); err != nil {
		return nil, err
	}
	if c.dDeg, err = upload(e, c.degree); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if c.dEdges, err = upload(e, c.edges); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// source makes an array of n elements, all zero (fill) but the first
// (first).
func source[T any](e *Env, site *rt.AllocSite[T], n int, fill, first T) (rt.Buffer[T], error) {
	b, err := alloc(e, site, n)
	if err != nil {
		return b, err
	}
	err = b.Fill(e.Q, fill)
	if err == nil {
		err = b.WriteAt(e.Q, 0, []T{first})
	}
	if err != nil {
		return b, errors.Join(err, b.Free())
	}
	return b, nil
}

func (c *bfsCase) Run() (err error) {
	if err := free(c.cost); err != nil {
		return err
	}
	c.cost = rt.Buffer[int32]{}
	e, n := c.e, len(c.start)
	if c.cost, err = source(e, &costSite, n, -1, 0); err != nil {
		return err
	}
	visited, err := source(e, &visitedSite, n, 0, 1)
	if err != nil {
		return err
	}
	frontier, err := source(e, &frontierSite, n, 0, 1)
	if err != nil {
		return errors.Join(err, visited.Free())
	}
	defer func() { err = errors.Join(err, free(visited, frontier)) }()
	r := rt.Range1(n)
	for c.levels = 0; ; c.levels++ {
		if err := Over.Write(e.Q, 0); err != nil {
			return err
		}
		ex := Expand{Start: c.dStart, Degree: c.dDeg, Edges: c.dEdges, Frontier: frontier, Visited: visited, Cost: c.cost, N: int32(n)}
		if err := allocOut(e, ex.AllocUpdating, &ex.Updating, n); err != nil {
			return err
		}
		up := Update{Updating: ex.Updating, Visited: visited, N: int32(n)}
		err := ex.Updating.Fill(e.Q, 0)
		if err == nil {
			err = ex.Enqueue(e.Q, r)
		}
		if err == nil {
			err = allocOut(e, up.AllocNext, &up.Next, n)
		}
		if err == nil {
			err = up.Enqueue(e.Q, r)
		}
		err = errors.Join(err, free(ex.Updating, frontier))
		frontier = up.Next
		if err != nil {
			return err
		}
		over, err := readFlag(e, &Over)
		if err != nil {
			return err
		}
		if over == 0 {
			return nil
		}
	}
}

func (c *bfsCase) Verify() error {
	got, err := download(c.e, c.cost)
	if err != nil {
		return err
	}
	want := make([]int32, len(c.start))
	for i := range want {
		want[i] = -1
	}
	want[0] = 0
	for q := []int32{0}; len(q) > 0; q = q[1:] {
		i := q[0]
		for _, id := range c.edges[c.start[i] : c.start[i]+c.degree[i]] {
			if want[id] < 0 {
				want[id] = want[i] + 1
				q = append(q, id)
			}
		}
	}
	return equal("cost", got, want)
}

func (c *bfsCase) Close() error {
	return free(c.dStart, c.dDeg, c.dEdges, c.cost)
}
