package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// SceneParams describe the scene of the ray tracer, as OpenCL C lays out
// struct SceneParams.
type SceneParams struct {
	Eye, Light      [3]float32
	Ambient, FloorY float32
	Spheres         int32
}

// Scene is the scene being traced.
//
//dgen:global host_access=write
var Scene rt.DeviceGlobal[SceneParams]

// Ray is the image of ray.cl, its square roots and divisions correctly
// rounded as Go's are.
//
//dgen:program source=ray.cl options="-cl-fp32-correctly-rounded-divide-sqrt"
var Ray rt.Program

// Primary makes the rays from the eye through each of W x H pixels.
//
//dgen:kernel program=Ray name=ray_primary
type Primary struct {
	Pos, Dir, Colour rt.Buffer[[4]float32] `dgen:"out"`
	W, H             int32
}

// Bounce advances N rays by one bounce.
//
//dgen:kernel program=Ray name=ray_bounce
type Bounce struct {
	NPos, NDir, NColour rt.Buffer[[4]float32] `dgen:"out"`
	Pos, Dir, Colour    rt.Buffer[[4]float32]
	Spheres, Paint      rt.Buffer[[4]float32]
	N                   int32
}

// ray traces a Size.N x Size.M image of 12 random spheres over a floor
// with Size.K bounces, allocating three ray arrays in every bounce.
var ray = Program{
	Name:   "ray",
	Source: "accelerate/ray/trace.fut",
	Datasets: []Dataset{
		{Name: "800x600", Futhark: 1.30, GPU: Size{N: 800, M: 600, K: 4}, Small: Size{N: 400, M: 300, K: 4}},
	},
	Test: Size{N: 120, M: 90, K: 3},
	New:  newRay,
}

type rayCase struct {
	e                *Env
	w, h, bounces    int
	scene            SceneParams
	spheres, paint   [][4]float32
	dSpheres, dPaint rt.Buffer[[4]float32]
	pos, dir, colour rt.Buffer[[4]float32]
}

func newRay(e *Env, s Size, seed uint64) (Case, error) {
	if s.N <= 0 || s.M <= 0 || s.K <= 0 {
		return nil, fmt.Errorf("ray: %w: %d x %d pixels, %d bounces", rt.ErrInvalidArgument, s.N, s.M, s.K)
	}
	r := rand.New(rand.NewPCG(seed, 0x7a4))
	c := &rayCase{e: e, w: s.N, h: s.M, bounces: s.K}
	c.scene = SceneParams{Eye: [3]float32{0, 0, -700}, Light: [3]float32{300, 600, -300}, Ambient: 0.15, FloorY: -150, Spheres: 12}
	for range c.scene.Spheres {
		rad := 30 + 70*r.Float32()
		c.spheres = append(c.spheres, [4]float32{-300 + 600*r.Float32(), -150 + rad + 100*r.Float32(), 100 + 500*r.Float32(), rad})
		c.paint = append(c.paint, [4]float32{r.Float32(), r.Float32(), r.Float32(), 0.5 * r.Float32()})
	}
	var err error
	if c.dSpheres, err = upload(e, c.spheres); err != nil {
		return nil, err
	}
	if c.dPaint, err = upload(e, c.paint); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := Scene.Write(e.Q, c.scene); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *rayCase) Run() error {
	if err := c.freeRays(); err != nil {
		return err
	}
	e, n := c.e, c.w*c.h
	r := rt.Range1(n)
	p := Primary{W: int32(c.w), H: int32(c.h)}
	if err := c.allocRays(p.AllocPos, &p.Pos, p.AllocDir, &p.Dir, p.AllocColour, &p.Colour); err != nil {
		return err
	}
	c.pos, c.dir, c.colour = p.Pos, p.Dir, p.Colour
	if err := p.Enqueue(e.Q, r); err != nil {
		return err
	}
	for range c.bounces {
		b := Bounce{Pos: c.pos, Dir: c.dir, Colour: c.colour, Spheres: c.dSpheres, Paint: c.dPaint, N: int32(n)}
		if err := c.allocRays(b.AllocNPos, &b.NPos, b.AllocNDir, &b.NDir, b.AllocNColour, &b.NColour); err != nil {
			return err
		}
		err := b.Enqueue(e.Q, r)
		err = errors.Join(err, c.freeRays())
		c.pos, c.dir, c.colour = b.NPos, b.NDir, b.NColour
		if err != nil {
			return err
		}
	}
	return e.Q.Finish()
}

// allocRays allocates the three ray arrays of a launch; on error none is
// left allocated.
func (c *rayCase) allocRays(ap func(*rt.Queue, int) error, p *rt.Buffer[[4]float32], ad func(*rt.Queue, int) error, d *rt.Buffer[[4]float32],
	ac func(*rt.Queue, int) error, col *rt.Buffer[[4]float32]) error {
	n := c.w * c.h
	if err := allocOut(c.e, ap, p, n); err != nil {
		return err
	}
	if err := allocOut(c.e, ad, d, n); err != nil {
		return errors.Join(err, p.Free())
	}
	if err := allocOut(c.e, ac, col, n); err != nil {
		return errors.Join(err, p.Free(), d.Free())
	}
	return nil
}

func (c *rayCase) freeRays() error {
	err := free(c.pos, c.dir, c.colour)
	c.pos, c.dir, c.colour = rt.Buffer[[4]float32]{}, rt.Buffer[[4]float32]{}, rt.Buffer[[4]float32]{}
	return err
}

func (c *rayCase) Close() error {
	return errors.Join(free(c.dSpheres, c.dPaint), c.freeRays())
}

// Verify traces the image on the CPU with ray.cl's float32 operations and
// compares the colours within 1e-3 per channel.
func (c *rayCase) Verify() error {
	got, err := download(c.e, c.colour)
	if err != nil {
		return err
	}
	for i, g := range got {
		want := c.trace(i)
		for k := range 3 {
			if d := float64(g[k] - want[k]); !(math.Abs(d) <= 1e-3) {
				return mismatch("colour", i, g, want)
			}
		}
	}
	return nil
}

type vec [4]float32

func (a vec) sub(b vec) vec { return vec{a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]} }
func dot3(a, b vec) float32 {
	return float32(a[0]*b[0]) + float32(a[1]*b[1]) + float32(a[2]*b[2])
}
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// nearest is nearest of ray.cl.
func (c *rayCase) nearest(p, d vec) (float32, int) {
	best, hit := float32(math.Inf(1)), -1
	for s, sp := range c.spheres {
		oc := p.sub(sp)
		b := dot3(oc, d)
		disc := float32(b*b) - (dot3(oc, oc) - float32(sp[3]*sp[3]))
		if disc > 0 {
			if t := -b - sqrt32(disc); t > 1e-3 && t < best {
				best, hit = t, s
			}
		}
	}
	return best, hit
}

// trace returns the colour of pixel i, as ray_primary and ray_bounce
// compute it.
func (c *rayCase) trace(i int) vec {
	sc := c.scene
	eye := vec{sc.Eye[0], sc.Eye[1], sc.Eye[2], 0}
	d := vec{float32(i%c.w) - float32(c.w/2), float32(c.h/2) - float32(i/c.w), 0, 0}.sub(eye)
	l := sqrt32(dot3(d, d))
	p, d, col := eye, vec{d[0] / l, d[1] / l, d[2] / l, 1}, vec{}
	for range c.bounces {
		if d[3] == 0 {
			break
		}
		t, hit := c.nearest(p, d)
		normal, look := vec{0, 1, 0, 0}, vec{0.6, 0.6, 0.6, 0.3}
		if d[1] < 0 {
			if tf := (sc.FloorY - p[1]) / d[1]; tf > 1e-3 && tf < t {
				t, hit = tf, -2
			}
		}
		if hit == -1 {
			sky := vec{0.2, 0.3, 0.5}
			for k := range 3 {
				col[k] += float32(d[3] * sky[k])
			}
			d[3] = 0
			break
		}
		hp := vec{p[0] + float32(t*d[0]), p[1] + float32(t*d[1]), p[2] + float32(t*d[2]), 0}
		if hit >= 0 {
			s := c.spheres[hit]
			normal = vec{(hp[0] - s[0]) / s[3], (hp[1] - s[1]) / s[3], (hp[2] - s[2]) / s[3], 0}
			look = c.paint[hit]
		}
		lv := vec{sc.Light[0], sc.Light[1], sc.Light[2], 0}.sub(hp)
		dist := sqrt32(dot3(lv, lv))
		lv = vec{lv[0] / dist, lv[1] / dist, lv[2] / dist, 0}
		diffuse := max(dot3(normal, lv), 0)
		if diffuse > 0 {
			if tb, _ := c.nearest(hp, lv); tb < dist {
				diffuse = 0
			}
		}
		shade := sc.Ambient + float32((1-sc.Ambient)*diffuse)
		k := float32(float32(d[3]*(1-look[3])) * shade)
		for j := range 3 {
			col[j] += float32(k * look[j])
		}
		dn := float32(2 * dot3(d, normal))
		d = vec{d[0] - float32(dn*normal[0]), d[1] - float32(dn*normal[1]), d[2] - float32(dn*normal[2]), float32(d[3] * look[3])}
		p = hp
	}
	return col
}
