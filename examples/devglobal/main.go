package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"
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
	q := ctx.Queue()
	res["device"] = q.Device().Name
	say("device: %s", q.Device().Name)

	// The shared counter: zero at first, bumped by two kernels of Counting,
	// read by the kernel of Reporting.
	if v, err := Counter.Read(q); err != nil || v != 0 {
		return res, fmt.Errorf("initial counter %d: %v", v, err)
	}
	const n = 64
	if err := (&Count{Per: 1}).Enqueue(q, rt.Range1(n)); err != nil {
		return res, err
	}
	if err := (&CountTwice{Per: 3}).Enqueue(q, rt.Range1(n)); err != nil {
		return res, err
	}
	out, err := rt.NewBuffer[uint32](ctx, 2)
	if err != nil {
		return res, err
	}
	defer out.Free()
	want := uint32(n*1 + n*6)
	for i := 1; i <= 2; i++ {
		if err := (&Report{Out: out}).Enqueue(q, rt.Range1(1)); err != nil {
			return res, err
		}
		got := make([]uint32, 2)
		if err := out.Read(q, got); err != nil {
			return res, err
		}
		if err := errors.Join(check("counter seen by report", got[0], want), check("report's own Seen", got[1], uint32(i))); err != nil {
			return res, err
		}
	}
	host, err := Counter.Read(q)
	if err != nil {
		return res, err
	}
	if err := check("counter read by the host", host, want); err != nil {
		return res, err
	}
	say("counter: %d work-items of count (+1) and of count_twice (+6): %d, seen by report and the host", n, host)
	res["counter"] = host

	// Image scope: Steps lives in Counting's image, Seen in Reporting's.
	steps, err := Steps.Read(q)
	if err != nil {
		return res, err
	}
	seen, err := Seen.Read(q)
	if err != nil {
		return res, err
	}
	if err := errors.Join(check("Steps", steps, uint32(1)), check("Seen", seen, uint32(2))); err != nil {
		return res, err
	}
	say("image scope: Steps=%d in Counting's image, Seen=%d in Reporting's", steps, seen)
	res["steps"], res["seen"] = steps, seen

	// Host write, kernel read, and back.
	if err := Counter.Write(q, 1000); err != nil {
		return res, err
	}
	if err := (&Count{Per: 2}).Enqueue(q, rt.Range1(10)); err != nil {
		return res, err
	}
	back, err := Counter.Read(q)
	if err != nil {
		return res, err
	}
	if err := check("counter after host write and count", back, uint32(1020)); err != nil {
		return res, err
	}
	say("host wrote 1000, count added 10*2: %d", back)

	// A struct global, written whole and in part.
	if err := P.Write(q, Params{Gain: 2, N: 1, Offset: [2]float32{0.5, 9}}); err != nil {
		return res, err
	}
	if err := P.WriteAt(q, 0, []byte{0, 0, 0x40, 0x40}); err != nil { // Gain = 3.0
		return res, err
	}
	sc := &Scale{K: 2}
	if err := sc.AllocOut(q, 8); err != nil {
		return res, err
	}
	defer sc.Out.Free()
	if err := sc.Enqueue(q, rt.Range1(8)); err != nil {
		return res, err
	}
	vals := make([]float32, 8)
	if err := sc.Out.Read(q, vals); err != nil {
		return res, err
	}
	for i, v := range vals {
		if err := check(fmt.Sprintf("scale[%d]", i), v, 2*3*float32(i)+0.5+1); err != nil {
			return res, err
		}
	}
	say("struct global P{Gain: 3, N: 1, Offset: [0.5 9]}: scale wrote %v", vals)
	res["scale"] = vals

	// The image-scope global in no program lives in host memory.
	if err := Unused.Write(q, -7); err != nil {
		return res, err
	}
	if v, err := Unused.Read(q); err != nil || v != -7 {
		return res, fmt.Errorf("unused image-scope global: %d, %v", v, err)
	}
	say("image-scope global in no program: host memory, wrote and read -7")

	// The errors: out of range, and a write to a read-only global.
	err = Counter.WriteAt(q, 2, []byte{1, 2, 3})
	if !errors.Is(err, rt.ErrOutOfRange) {
		return res, fmt.Errorf("write past the end: got %v, want ErrOutOfRange", err)
	}
	if v, _ := Counter.Read(q); v != 1020 {
		return res, fmt.Errorf("out-of-range write changed the counter to %d", v)
	}
	say("bounds: %v", err)
	res["bounds_error"] = err.Error()
	var steps2 rt.DeviceGlobal[uint32] = Steps // a copy shares the registration
	err = steps2.WriteAt(q, 0, []byte{1, 0, 0, 0})
	if !errors.Is(err, rt.ErrInvalidArgument) {
		return res, fmt.Errorf("write to a host_access=read global: got %v", err)
	}
	say("host access: %v", err)
	res["host_access_error"] = err.Error()
	return res, nil
}
