package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends" // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
)

func main() {
	jsonOut := flag.Bool("json", false, "print one JSON object, with an \"ok\" field, last")
	flag.Parse()
	res, err := run(func(format string, args ...any) {
		if !*jsonOut {
			fmt.Printf(format+"\n", args...)
		}
	})
	res["ok"] = err == nil
	if err != nil {
		res["error"] = err.Error()
		fmt.Fprintln(os.Stderr, "devglobal:", err)
	}
	if *jsonOut {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
	}
	if err != nil {
		os.Exit(1)
	}
}

func check[T comparable](what string, got, want T) error {
	if got != want {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

func run(say func(string, ...any)) (map[string]any, error) {
	res := map[string]any{}
	ctx, err := rt.Open()
	if err != nil {
		return res, err
	}
	defer ctx.Close()
	d := &demo{ctx: ctx, q: ctx.Queue(), res: res, say: say}
	res["device"] = d.q.Device().Name
	say("device: %s", d.q.Device().Name)
	for _, step := range []func() error{d.sharedCounter, d.imageScope, d.hostWrite, d.structGlobal, d.hostMemory, d.misuse} {
		if err := step(); err != nil {
			return res, err
		}
	}
	return res, nil
}

// demo is one run of the steps below on one queue; each step records what
// it saw in res and says it.
type demo struct {
	ctx *rt.Context
	q   *rt.Queue
	res map[string]any
	say func(string, ...any)
}

// sharedCounter: the shared counter, zero at first, bumped by two kernels
// of Counting and read by the kernel of Reporting.
func (d *demo) sharedCounter() error {
	q := d.q
	if v, err := Counter.Read(q); err != nil || v != 0 {
		return fmt.Errorf("initial counter %d: %v", v, err)
	}
	const n = 64
	if err := (&Count{Per: 1}).Enqueue(q, rt.Range1(n)); err != nil {
		return err
	}
	if err := (&CountTwice{Per: 3}).Enqueue(q, rt.Range1(n)); err != nil {
		return err
	}
	out, err := rt.NewBuffer[uint32](d.ctx, 2)
	if err != nil {
		return err
	}
	defer out.Free()
	want := uint32(n*1 + n*6)
	for i := 1; i <= 2; i++ {
		if err := (&Report{Out: out}).Enqueue(q, rt.Range1(1)); err != nil {
			return err
		}
		got := make([]uint32, 2)
		if err := out.Read(q, got); err != nil {
			return err
		}
		if err := errors.Join(check("counter seen by report", got[0], want), check("report's own Seen", got[1], uint32(i))); err != nil {
			return err
		}
	}
	host, err := Counter.Read(q)
	if err != nil {
		return err
	}
	if err := check("counter read by the host", host, want); err != nil {
		return err
	}
	d.say("counter: %d work-items of count (+1) and of count_twice (+6): %d, seen by report and the host", n, host)
	d.res["counter"] = host
	return nil
}

// imageScope: Steps lives in Counting's image, Seen in Reporting's.
func (d *demo) imageScope() error {
	steps, err := Steps.Read(d.q)
	if err != nil {
		return err
	}
	seen, err := Seen.Read(d.q)
	if err != nil {
		return err
	}
	if err := errors.Join(check("Steps", steps, uint32(1)), check("Seen", seen, uint32(2))); err != nil {
		return err
	}
	d.say("image scope: Steps=%d in Counting's image, Seen=%d in Reporting's", steps, seen)
	d.res["steps"], d.res["seen"] = steps, seen
	return nil
}

// hostWrite: a host write, a kernel's read, and back.
func (d *demo) hostWrite() error {
	if err := Counter.Write(d.q, 1000); err != nil {
		return err
	}
	if err := (&Count{Per: 2}).Enqueue(d.q, rt.Range1(10)); err != nil {
		return err
	}
	back, err := Counter.Read(d.q)
	if err != nil {
		return err
	}
	if err := check("counter after host write and count", back, uint32(1020)); err != nil {
		return err
	}
	d.say("host wrote 1000, count added 10*2: %d", back)
	return nil
}

// structGlobal: a struct global, written whole and in part, read by scale.
func (d *demo) structGlobal() error {
	q := d.q
	if err := P.Write(q, Params{Gain: 2, N: 1, Offset: [2]float32{0.5, 9}}); err != nil {
		return err
	}
	if err := P.WriteBytes(q, 0, []byte{0, 0, 0x40, 0x40}); err != nil { // Gain = 3.0
		return err
	}
	sc := &Scale{K: 2}
	if err := sc.AllocOut(q, 8); err != nil {
		return err
	}
	defer sc.Out.Free()
	if err := sc.Enqueue(q, rt.Range1(8)); err != nil {
		return err
	}
	vals := make([]float32, 8)
	if err := sc.Out.Read(q, vals); err != nil {
		return err
	}
	for i, v := range vals {
		if err := check(fmt.Sprintf("scale[%d]", i), v, 2*3*float32(i)+0.5+1); err != nil {
			return err
		}
	}
	d.say("struct global P{Gain: 3, N: 1, Offset: [0.5 9]}: scale wrote %v", vals)
	d.res["scale"] = vals
	return nil
}

// hostMemory: the image-scope global in no program lives in host memory.
func (d *demo) hostMemory() error {
	if err := Unused.Write(d.q, -7); err != nil {
		return err
	}
	if v, err := Unused.Read(d.q); err != nil || v != -7 {
		return fmt.Errorf("unused image-scope global: %d, %v", v, err)
	}
	d.say("image-scope global in no program: host memory, wrote and read -7")
	return nil
}

// misuse: an out-of-range write and a write to a read-only global are
// errors that change nothing.
func (d *demo) misuse() error {
	err := Counter.WriteBytes(d.q, 2, []byte{1, 2, 3})
	if !errors.Is(err, rt.ErrOutOfRange) {
		return fmt.Errorf("write past the end: got %v, want ErrOutOfRange", err)
	}
	if v, _ := Counter.Read(d.q); v != 1020 {
		return fmt.Errorf("out-of-range write changed the counter to %d", v)
	}
	d.say("bounds: %v", err)
	d.res["bounds_error"] = err.Error()
	steps := &Steps // through a pointer, out of dgen's sight: the runtime refuses it
	err = steps.WriteBytes(d.q, 0, []byte{1, 0, 0, 0})
	if !errors.Is(err, rt.ErrInvalidArgument) {
		return fmt.Errorf("write to a host_access=read global: got %v", err)
	}
	d.say("host access: %v", err)
	d.res["host_access_error"] = err.Error()
	return nil
}
