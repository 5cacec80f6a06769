// Package drivertest is the conformance suite of rt/driver: one set of
// tests of the contract that every backend runs (PoCL's OpenCL in CI;
// NVIDIA's OpenCL and rt/cuda on a GPU machine). A backend's test calls Run
// for each of its devices, or RunAll for every registered backend.
package drivertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// RunAll runs the suite on every device of every registered backend. A
// backend that lists no platform here (rt/cuda without libcuda) is
// skipped, with its reason.
func RunAll(t *testing.T) {
	for _, name := range driver.Backends() {
		t.Run(name, func(t *testing.T) {
			b, err := driver.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			ps, err := b.Platforms()
			if err != nil {
				t.Skipf("backend %s lists no platform: %v", name, err)
			}
			n := 0
			for _, p := range ps {
				for _, d := range p.Devices {
					n++
					t.Run(strings.ReplaceAll(d.Label(), "/", "_"), func(t *testing.T) { Run(t, b, []driver.DeviceInfo{d}) })
				}
			}
			if n == 0 {
				t.Skipf("backend %s lists no device", name)
			}
		})
	}
}

// source is the suite's OpenCL C: every kernel shape the backends must run.
const source = `
__kernel void axpy(__global float* y, __global const float* x, float a, int n) {
	int i = get_global_id(0); if (i < n) y[i] += a * x[i]; }
__kernel void ids(__global int* o) {
	size_t g = get_global_id(0) + get_global_size(0) * (get_global_id(1) + get_global_size(1) * get_global_id(2));
	o[8*g] = get_global_id(0); o[8*g+1] = get_global_id(1); o[8*g+2] = get_global_id(2); o[8*g+3] = get_local_id(0);
	o[8*g+4] = get_group_id(1); o[8*g+5] = get_num_groups(0); o[8*g+6] = get_local_size(2); o[8*g+7] = get_work_dim(); }
__kernel void locals(__global float* out, __local float* a, int n, __local double* b, __local char* c) {
	__local float st[64];
	int l = get_local_id(0); a[l] = l; b[l] = 2.0 * l; c[l] = (char)l; st[l & 63] = 1.0f;
	barrier(CLK_LOCAL_MEM_FENCE);
	int r = get_local_size(0) - 1 - l;
	out[get_global_id(0)] = a[r] + (float)b[r] + st[r & 63] + c[r] + n; }
typedef struct { float x; int y; double z; } S;
__kernel void values(__global double* o, S s, float2 v, int4 w, long z, char ch) {
	o[0] = s.x + s.y + s.z; o[1] = v.y; o[2] = w.z; o[3] = (double)z; o[4] = ch; }
__constant float tab[4] = {1, 2, 3, 4};
__kernel void consts(__global float* o) { o[get_global_id(0)] = tab[get_global_id(0) & 3]; }
__kernel void cparam(__global float* o, __constant float* c) { int i = get_global_id(0); o[i] = c[i] + tab[i & 3]; }
__kernel void spin(__global int* o, int n) { int s = 0; for (int i = 0; i < n; i++) s += i * o[1]; o[0] = s; }
`

// env is one backend context on the devices under test.
type env struct {
	t    *testing.T // the test running
	root *testing.T // the test that opened the context
	prog *driver.Program
	ctx  driver.Context
	q    driver.Queue
	dev  driver.DeviceInfo
}

func open(t *testing.T, b driver.Backend, devs []driver.DeviceInfo, profiling bool) *env {
	t.Helper()
	ctx, err := b.NewContext(devs)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(func() {
		if err := ctx.Release(); err != nil {
			t.Errorf("context Release: %v", err)
		}
	})
	q, err := ctx.NewQueue(0, profiling)
	if err != nil {
		t.Fatalf("NewQueue: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Release(); err != nil {
			t.Errorf("queue Release: %v", err)
		}
	})
	return &env{t: t, root: t, ctx: ctx, q: q, dev: devs[0], prog: new(driver.Program)}
}

func (e *env) build() driver.Program {
	e.t.Helper()
	if *e.prog != nil {
		return *e.prog
	}
	p, err := e.ctx.BuildProgram(source, "")
	if err != nil {
		e.t.Fatalf("BuildProgram: %v", err)
	}
	e.root.Cleanup(func() { p.Release() })
	*e.prog = p
	return p
}

func (e *env) kernel(name string) driver.Kernel {
	e.t.Helper()
	k, err := e.build().NewKernel(name)
	if err != nil {
		e.t.Fatalf("NewKernel(%s): %v", name, err)
	}
	e.t.Cleanup(func() { k.Release() })
	return k
}

func (e *env) buffer(size int64) driver.Buffer {
	e.t.Helper()
	b, err := e.ctx.NewBuffer(size)
	if err != nil {
		e.t.Fatalf("NewBuffer(%d): %v", size, err)
	}
	e.t.Cleanup(func() {
		if err := b.Release(); err != nil {
			e.t.Errorf("buffer Release: %v", err)
		}
	})
	return b
}

func (e *env) write(b driver.Buffer, off int64, data []byte) {
	e.t.Helper()
	if _, err := e.q.WriteBuffer(b, true, off, int64(len(data)), unsafe.Pointer(&data[0]), nil); err != nil {
		e.t.Fatalf("WriteBuffer: %v", err)
	}
}

func (e *env) read(b driver.Buffer, off, n int64) []byte {
	e.t.Helper()
	out := make([]byte, n)
	if _, err := e.q.ReadBuffer(b, true, off, n, unsafe.Pointer(&out[0]), nil); err != nil {
		e.t.Fatalf("ReadBuffer: %v", err)
	}
	return out
}

func (e *env) launch(k driver.Kernel, r driver.NDRange) {
	e.t.Helper()
	if err := e.q.SubmitKernel(k, r, nil); err != nil {
		e.t.Fatalf("SubmitKernel: %v", err)
	}
}

func ints(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, out)
	return out
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, out)
	return out
}

func le(v any) []byte {
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, v)
	return buf.Bytes()
}

// Run runs the suite on a context of b over devs.
func Run(t *testing.T, b driver.Backend, devs []driver.DeviceInfo) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Transfers", testTransfers},
		{"Fill", testFill},
		{"Copy", testCopy},
		{"SubBuffer", testSubBuffer},
		{"HostBuffer", testHostBuffer},
		{"Axpy", testAxpy},
		{"Ids", testIds},
		{"Locals", testLocals},
		{"Values", testValues},
		{"Consts", testConsts},
		{"Events", testEvents},
		{"WaitAcrossQueues", testWaitAcrossQueues},
		{"Binaries", testBinaries},
		{"BuildError", testBuildError},
		{"NoKernel", testNoKernel},
		{"WorkGroupInfo", testWorkGroupInfo},
		{"LaunchArgs", testLaunchArgs},
		{"Images", testImages},
		{"Priorities", testPriorities},
		{"MemInfo", testMemInfo},
	}
	e := open(t, b, devs, false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ec := *e
			ec.t = t
			tt.fn(t, &ec)
		})
	}
	t.Run("Profile", func(t *testing.T) { testProfile(t, open(t, b, devs, true)) })
	t.Run("KernelTimes", func(t *testing.T) { testKernelTimes(t, open(t, b, devs, false)) })
}

func testTransfers(t *testing.T, e *env) {
	buf := e.buffer(64)
	data := []byte("0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789ABCDEF")
	e.write(buf, 0, data)
	if got := e.read(buf, 0, 64); !bytes.Equal(got, data) {
		t.Errorf("read %q, want %q", got, data)
	}
	e.write(buf, 10, []byte("xyz"))
	if got := e.read(buf, 8, 6); string(got) != "89xyzd" {
		t.Errorf("read at 8: %q", got)
	}
	// A non-blocking transfer returns an event.
	dst := make([]byte, 16)
	ev, err := e.q.ReadBuffer(buf, false, 16, 16, unsafe.Pointer(&dst[0]), nil)
	if err != nil || ev == nil {
		t.Fatalf("non-blocking ReadBuffer: %v, %v", ev, err)
	}
	if err := ev.Wait(); err != nil {
		t.Fatal(err)
	}
	ev.Release()
	if string(dst) != string(data[16:32]) {
		t.Errorf("non-blocking read %q", dst)
	}
	if _, err := e.q.ReadBuffer(buf, true, 60, 8, unsafe.Pointer(&dst[0]), nil); err == nil {
		t.Error("a read past the end succeeded")
	}
}

func testFill(t *testing.T, e *env) {
	for _, n := range []int{1, 2, 4, 8, 16} {
		buf := e.buffer(128)
		e.write(buf, 0, make([]byte, 128))
		pat := make([]byte, n)
		for i := range pat {
			pat[i] = byte(0xa0 + i)
		}
		ev, err := e.q.FillBuffer(buf, pat, int64(2*n), int64(4*n), nil)
		if err != nil {
			t.Fatalf("FillBuffer pattern %d: %v", n, err)
		}
		ev.Release()
		got := e.read(buf, 0, 128)
		want := make([]byte, 128)
		for i := 2 * n; i < 6*n; i++ {
			want[i] = pat[i%n]
		}
		if !bytes.Equal(got, want) {
			t.Errorf("pattern of %d: got % x", n, got[:8*n])
		}
	}
}

func testCopy(t *testing.T, e *env) {
	a, b := e.buffer(32), e.buffer(32)
	e.write(a, 0, []byte("abcdefghijklmnopqrstuvwxyz012345"))
	e.write(b, 0, make([]byte, 32))
	ev, err := e.q.CopyBuffer(a, b, 4, 8, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev.Release()
	if got := e.read(b, 8, 10); string(got) != "efghijklmn" {
		t.Errorf("copied %q", got)
	}
}

func testSubBuffer(t *testing.T, e *env) {
	sb, ok := e.ctx.(driver.SubBufferContext)
	if !ok {
		t.Skip("no sub-buffers")
	}
	align := max(e.dev.MemBaseAddrAlign, 4)
	buf := e.buffer(4 * align)
	e.write(buf, 0, make([]byte, 4*align))
	v, err := sb.NewSubBuffer(buf, align, 2*align)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Release()
	e.write(v, 0, []byte{1, 2, 3, 4})
	if got := e.read(buf, align, 4); !bytes.Equal(got, []byte{1, 2, 3, 4}) {
		t.Errorf("view write seen in parent as % x", got)
	}
	// A kernel sees the view's first element as element 0.
	k := e.kernel("axpy")
	x := e.buffer(4 * 4)
	e.write(x, 0, le([]float32{1, 1, 1, 1}))
	e.write(v, 0, le([]float32{10, 20}))
	k.SetArgBuffer(0, v)
	k.SetArgBuffer(1, x)
	k.SetArgScalar(2, 4, uint64(math.Float32bits(2)))
	k.SetArgScalar(3, 4, 2)
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{2}})
	if got := floats(e.read(buf, align, 8)); got[0] != 12 || got[1] != 22 {
		t.Errorf("kernel on a view: %v", got)
	}
}

func testHostBuffer(t *testing.T, e *env) {
	hc, ok := e.ctx.(driver.HostBufferContext)
	mq, ok2 := e.q.(driver.MapQueue)
	if !ok || !ok2 {
		t.Skip("no host buffers")
	}
	h, err := hc.NewHostBuffer(64)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	p, err := mq.MapBuffer(h, 0, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	host := unsafe.Slice((*byte)(p), 64)
	copy(host, "pinned memory, read by the device through a copy....")
	// OpenCL makes the host's writes visible to the device at the unmap.
	if err := mq.UnmapBuffer(h, p); err != nil {
		t.Fatal(err)
	}
	dev := e.buffer(64)
	ev, err := e.q.CopyBuffer(h, dev, 0, 0, 64, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev.Release()
	if got := e.read(dev, 0, 6); string(got) != "pinned" {
		t.Errorf("device copy of host buffer: %q", got)
	}
}

func testAxpy(t *testing.T, e *env) {
	const n = 1000
	k := e.kernel("axpy")
	if got, err := k.NumArgs(); err != nil || got != 4 {
		t.Errorf("NumArgs = %d, %v", got, err)
	}
	y, x := e.buffer(4*1024), e.buffer(4*1024)
	xs, ys := make([]float32, 1024), make([]float32, 1024)
	for i := range xs {
		xs[i], ys[i] = float32(i), 1
	}
	e.write(x, 0, le(xs))
	e.write(y, 0, le(ys))
	k.SetArgBuffer(0, y)
	k.SetArgBuffer(1, x)
	k.SetArgScalar(2, 4, uint64(math.Float32bits(0.5)))
	k.SetArgScalar(3, 4, n)
	for range 3 {
		e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{1024}, Local: [3]int{128}})
	}
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{1024}}) // the backend picks the work-group
	if err := e.q.Finish(); err != nil {
		t.Fatal(err)
	}
	got := floats(e.read(y, 0, 4*1024))
	for i, v := range got {
		want := float32(1)
		if i < n {
			want = 1 + 4*0.5*float32(i)
		}
		if v != want {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
	}
}

func testIds(t *testing.T, e *env) {
	k := e.kernel("ids")
	for _, r := range []driver.NDRange{
		{Dims: 1, Global: [3]int{64}, Local: [3]int{16}},
		{Dims: 2, Global: [3]int{8, 6}, Local: [3]int{4, 2}},
		{Dims: 3, Global: [3]int{4, 4, 4}, Local: [3]int{2, 2, 4}},
	} {
		n := r.Global[0] * max(r.Global[1], 1) * max(r.Global[2], 1)
		o := e.buffer(int64(32 * n))
		k.SetArgBuffer(0, o)
		e.launch(k, r)
		got := ints(e.read(o, 0, int64(32*n)))
		g, l := r.Global, r.Local
		for d := r.Dims; d < 3; d++ {
			g[d], l[d] = 1, 1
		}
		for z := range g[2] {
			for y := range g[1] {
				for x := range g[0] {
					i := 8 * (x + g[0]*(y+g[1]*z))
					want := []int32{int32(x), int32(y), int32(z), int32(x % l[0]), int32(y / l[1]), int32(g[0] / l[0]), int32(l[2]), int32(r.Dims)}
					for j, w := range want {
						if got[i+j] != w {
							t.Fatalf("range %v: work-item (%d,%d,%d): field %d = %d, want %d", r, x, y, z, j, got[i+j], w)
						}
					}
				}
			}
		}
	}
}

func testLocals(t *testing.T, e *env) {
	const l, groups = 128, 4
	k := e.kernel("locals")
	out := e.buffer(4 * l * groups)
	k.SetArgBuffer(0, out)
	if err := errors.Join(k.SetArgLocal(1, 4*l), k.SetArgScalar(2, 4, 7), k.SetArgLocal(3, 8*l), k.SetArgLocal(4, l)); err != nil {
		t.Fatal(err)
	}
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{l * groups}, Local: [3]int{l}})
	got := floats(e.read(out, 0, 4*l*groups))
	for i, v := range got {
		r := l - 1 - i%l
		if want := float32(r) + float32(2*r) + 1 + float32(int8(r)) + 7; v != want {
			t.Fatalf("out[%d] = %v, want %v", i, v, want)
		}
	}
}

func testValues(t *testing.T, e *env) {
	k := e.kernel("values")
	o := e.buffer(5 * 8)
	k.SetArgBuffer(0, o)
	type S struct {
		X float32
		Y int32
		Z float64
	}
	s := S{1.5, 2, 0.25}
	v2 := [2]float32{3, 4}
	w4 := [4]int32{5, 6, 7, 8}
	err := errors.Join(
		k.SetArgBytes(1, unsafe.Sizeof(s), unsafe.Pointer(&s)),
		k.SetArgBytes(2, 8, unsafe.Pointer(&v2)),
		k.SetArgBytes(3, 16, unsafe.Pointer(&w4)),
		k.SetArgScalar(4, 8, uint64(1)<<40),
		k.SetArgScalar(5, 1, 0xfe))
	if err != nil {
		t.Fatal(err)
	}
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{1}})
	var got [5]float64
	binary.Read(bytes.NewReader(e.read(o, 0, 40)), binary.LittleEndian, &got)
	if want := [5]float64{3.75, 4, 7, 1 << 40, -2}; got != want {
		t.Errorf("values %v, want %v", got, want)
	}
}

func testConsts(t *testing.T, e *env) {
	k := e.kernel("consts")
	o := e.buffer(32)
	k.SetArgBuffer(0, o)
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{8}})
	if got := floats(e.read(o, 0, 32)); got[5] != 2 || got[7] != 4 {
		t.Errorf("constant table read as %v", got)
	}
	// A __constant pointer parameter beside the table: NVIDIA's OpenCL
	// reads it from constant memory, where rt/cuda's PTX rewrite must
	// read the buffer's global memory instead.
	c := e.buffer(32)
	e.write(c, 0, le([]float32{10, 20, 30, 40, 50, 60, 70, 80}))
	k = e.kernel("cparam")
	k.SetArgBuffer(0, o)
	k.SetArgBuffer(1, c)
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{8}})
	if got := floats(e.read(o, 0, 32)); got[0] != 11 || got[5] != 62 || got[7] != 84 {
		t.Errorf("c[i] + tab[i&3] read as %v, want [11 22 33 44 51 62 73 84]", got)
	}
}

func testEvents(t *testing.T, e *env) {
	k := e.kernel("spin")
	o := e.buffer(8)
	e.write(o, 0, le([]int32{0, 1}))
	k.SetArgBuffer(0, o)
	k.SetArgScalar(1, 4, 1000)
	ev, err := e.q.EnqueueKernel(k, driver.NDRange{Dims: 1, Global: [3]int{1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		t.Fatal(err)
	}
	if s, err := ev.Status(); err != nil || s != driver.StatusComplete {
		t.Errorf("status after Wait = %v, %v", s, err)
	}
	m, err := e.q.Marker(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Wait(); err != nil {
		t.Fatal(err)
	}
	m.Release()
	if got := ints(e.read(o, 0, 4)); got[0] != 499500 {
		t.Errorf("spin sum %d", got[0])
	}
}

func testWaitAcrossQueues(t *testing.T, e *env) {
	q2, err := e.ctx.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Release()
	k := e.kernel("spin")
	o := e.buffer(8)
	e.write(o, 0, le([]int32{0, 1}))
	k.SetArgBuffer(0, o)
	k.SetArgScalar(1, 4, 200000)
	ev, err := e.q.EnqueueKernel(k, driver.NDRange{Dims: 1, Global: [3]int{1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	// q2 reads after the kernel on q because it waits for its event.
	got := make([]byte, 4)
	if _, err := q2.ReadBuffer(o, true, 0, 4, unsafe.Pointer(&got[0]), []driver.Event{ev}); err != nil {
		t.Fatal(err)
	}
	var want int32
	for i := range int32(200000) {
		want += i
	}
	if v := ints(got)[0]; v != want {
		t.Errorf("q2 read %d before the kernel on q ended (%d)", v, want)
	}
	m, err := q2.Marker([]driver.Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	m.Wait()
	m.Release()
}

// testPriorities checks a PriorityContext: QueuePriority returns one of
// the priorities, PriorityNormal for itself, and a queue made at each
// priority it returns runs a kernel after a write and before a read.
func testPriorities(t *testing.T, e *env) {
	pc, ok := e.ctx.(driver.PriorityContext)
	if !ok {
		t.Skip("the backend's contexts make no queues at a priority")
	}
	if got := pc.QueuePriority(0, driver.PriorityNormal); got != driver.PriorityNormal {
		t.Errorf("QueuePriority(PriorityNormal) = %d", got)
	}
	k := e.kernel("axpy")
	for _, p := range []driver.Priority{driver.PriorityNormal, driver.PriorityHigh, driver.PriorityLow} {
		runsAt := pc.QueuePriority(0, p)
		if runsAt > driver.PriorityLow {
			t.Errorf("QueuePriority(%d) = %d, not a priority", p, runsAt)
			continue
		}
		t.Logf("priority %d runs at %d", p, runsAt)
		q, err := pc.NewQueueOptions(0, driver.QueueOptions{Priority: runsAt})
		if err != nil {
			t.Errorf("NewQueueOptions at %d: %v", runsAt, err)
			continue
		}
		y, x := e.buffer(4*64), e.buffer(4*64)
		xs := make([]float32, 64)
		for i := range xs {
			xs[i] = float32(i)
		}
		data := le(xs)
		for _, b := range []driver.Buffer{x, y} {
			if _, err := q.WriteBuffer(b, true, 0, 4*64, unsafe.Pointer(&data[0]), nil); err != nil {
				t.Fatal(err)
			}
		}
		k.SetArgBuffer(0, y)
		k.SetArgBuffer(1, x)
		k.SetArgScalar(2, 4, uint64(math.Float32bits(2)))
		k.SetArgScalar(3, 4, 64)
		if err := q.SubmitKernel(k, driver.NDRange{Dims: 1, Global: [3]int{64}}, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4*64)
		if _, err := q.ReadBuffer(y, true, 0, 4*64, unsafe.Pointer(&got[0]), nil); err != nil {
			t.Fatal(err)
		}
		for i, v := range floats(got) {
			if want := 3 * float32(i); v != want {
				t.Fatalf("priority %d: y[%d] = %v, want %v", runsAt, i, v, want)
			}
		}
		if err := q.Release(); err != nil {
			t.Errorf("queue Release: %v", err)
		}
	}
}

// testMemInfo checks a MemInfoContext: the device's free memory is at
// most its total, which is at most the device's GlobalMemSize, falls by
// at least the size of a buffer while it lives, and a device out of
// range is an error.
func testMemInfo(t *testing.T, e *env) {
	mc, ok := e.ctx.(driver.MemInfoContext)
	if !ok {
		t.Skip("the backend has no query of a device's free memory")
	}
	free, total, err := mc.MemInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	if free <= 0 || free > total || total > e.dev.GlobalMemSize {
		t.Errorf("MemInfo(0) = %d free of %d, want 0 < free <= total <= GlobalMemSize %d", free, total, e.dev.GlobalMemSize)
	}
	const size = 64 << 20
	b, err := e.ctx.NewBuffer(size)
	if err != nil {
		t.Fatal(err)
	}
	e.write(b, size-4, []byte{1, 2, 3, 4}) // a lazy driver commits at first use
	during, _, err := mc.MemInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(); err != nil {
		t.Fatal(err)
	}
	after, _, err := mc.MemInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("free: %d before a buffer of %d bytes, %d while it lives, %d after (of %d)", free, size, during, after, total)
	if free-during < size {
		t.Errorf("free memory fell by %d bytes for a buffer of %d", free-during, size)
	}
	if _, _, err := mc.MemInfo(1 << 20); err == nil {
		t.Error("MemInfo of a device out of range: no error")
	}
}

func testBinaries(t *testing.T, e *env) {
	bins, err := e.build().Binaries()
	if err != nil || len(bins) != 1 || len(bins[0]) == 0 {
		t.Fatalf("Binaries: %d, %v", len(bins), err)
	}
	p, err := e.ctx.LoadProgram(bins, "")
	if err != nil {
		t.Fatalf("LoadProgram: %v", err)
	}
	names, err := p.KernelNames()
	if err != nil || !strings.Contains(strings.Join(names, ","), "axpy") {
		t.Errorf("KernelNames = %v, %v", names, err)
	}
	k, err := p.NewKernel("consts")
	if err != nil {
		p.Release()
		t.Fatal(err)
	}
	// The program's release leaves its kernel usable.
	p.Release()
	o := e.buffer(16)
	k.SetArgBuffer(0, o)
	e.launch(k, driver.NDRange{Dims: 1, Global: [3]int{4}})
	if got := floats(e.read(o, 0, 16)); got[3] != 4 {
		t.Errorf("kernel of a loaded program: %v", got)
	}
	k.Release()
	if _, err := e.ctx.LoadProgram([][]byte{[]byte("not a binary")}, ""); err == nil {
		t.Error("LoadProgram of garbage succeeded")
	}
}

func testBuildError(t *testing.T, e *env) {
	_, err := e.ctx.BuildProgram("__kernel void k(__global int* p) { p[0] = undeclared; }", "")
	if !errors.Is(err, driver.ErrBuildFailed) {
		t.Fatalf("err = %v, want ErrBuildFailed", err)
	}
	var de *driver.Error
	if !errors.As(err, &de) || !strings.Contains(de.Log, "undeclared") {
		t.Errorf("build log does not name the identifier: %v", err)
	}
}

func testNoKernel(t *testing.T, e *env) {
	if _, err := e.build().NewKernel("nosuch"); !errors.Is(err, driver.ErrNoKernel) {
		t.Errorf("err = %v, want ErrNoKernel", err)
	}
}

func testWorkGroupInfo(t *testing.T, e *env) {
	k := e.kernel("locals")
	k.SetArgLocal(1, 512)
	info, err := k.WorkGroupInfo(e.dev.Handle)
	if err != nil {
		t.Fatal(err)
	}
	// Drivers differ in whether LocalMemSize counts __local arguments
	// (PoCL 5 does not): only the bounds of the work-group are checked.
	if info.WorkGroupSize < 1 || info.WorkGroupSize > e.dev.MaxWorkGroupSize || info.LocalMemSize < 0 {
		t.Errorf("work-group info %+v (device allows %d)", info, e.dev.MaxWorkGroupSize)
	}
}

func testProfile(t *testing.T, e *env) {
	k := e.kernel("spin")
	o := e.buffer(8)
	e.write(o, 0, le([]int32{0, 1}))
	k.SetArgBuffer(0, o)
	k.SetArgScalar(1, 4, 100000)
	var last uint64
	for i := range 3 {
		ev, err := e.q.EnqueueKernel(k, driver.NDRange{Dims: 1, Global: [3]int{1}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(); err != nil {
			t.Fatal(err)
		}
		tm, err := ev.Profile()
		ev.Release()
		if err != nil {
			t.Fatal(err)
		}
		if tm.Ended <= tm.Started || tm.Started < last {
			t.Errorf("launch %d: times %+v after %d", i, tm, last)
		}
		last = tm.Ended
	}
	m, err := e.q.Marker(nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Wait()
	tm, err := m.Profile()
	m.Release()
	if err != nil || tm.Ended < last {
		t.Errorf("marker times %+v, %v (last kernel ended %d)", tm, err, last)
	}
}

// testKernelTimes checks a kernel-timed queue (driver.KernelTimer), where
// the backend has one: long and short kernels, launched in turn with and
// without events and beside kernels on a plain queue, get their own times
// (each long one longer than every short one), in launch order; and
// testProfile passes on it, so that its kernel times and its markers'
// share one clock.
func testKernelTimes(t *testing.T, e *env) {
	ktc, ok := e.ctx.(driver.KernelTimer)
	if !ok {
		t.Skip("the backend has no kernel-timed queue")
	}
	q, err := ktc.NewKernelTimedQueue(0)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer q.Release()
	k, other := e.kernel("spin"), e.kernel("spin")
	o, o2 := e.buffer(8), e.buffer(8)
	e.write(o, 0, le([]int32{0, 1}))
	e.write(o2, 0, le([]int32{0, 1}))
	k.SetArgBuffer(0, o)
	other.SetArgBuffer(0, o2)
	other.SetArgScalar(1, 4, 1000)
	short := driver.NDRange{Dims: 1, Global: [3]int{64}, Local: [3]int{64}}
	long := driver.NDRange{Dims: 1, Global: [3]int{1}, Local: [3]int{1}}
	var evs []driver.Event
	var isLong []bool
	defer func() {
		for _, ev := range evs {
			ev.Release()
		}
	}()
	for i := range 300 {
		r, n := short, 10
		if i%3 == 0 {
			r, n = long, 20000
		}
		k.SetArgScalar(1, 4, uint64(n))
		if i%5 == 4 {
			if err := q.SubmitKernel(k, r, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			ev, err := q.EnqueueKernel(k, r, nil)
			if err != nil {
				t.Fatal(err)
			}
			evs, isLong = append(evs, ev), append(isLong, r == long)
		}
		if i%7 == 0 {
			if err := e.q.SubmitKernel(other, short, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	var last uint64
	var longest [2]uint64 // the shortest long kernel, the longest short one
	longest[0] = ^uint64(0)
	for i, ev := range evs {
		s, end, err := times(ev)
		if err != nil {
			t.Fatalf("kernel %d: %v", i, err)
		}
		if end <= s || s < last {
			t.Fatalf("kernel %d: times [%d, %d] after %d", i, s, end, last)
		}
		last = end
		if d := end - s; isLong[i] {
			longest[0] = min(longest[0], d)
		} else {
			longest[1] = max(longest[1], d)
		}
	}
	if longest[0] <= 2*longest[1] {
		t.Errorf("the shortest long kernel took %d ns, the longest short one %d: times went to other kernels", longest[0], longest[1])
	}
	testProfile(t, &env{t: t, root: e.root, prog: e.prog, ctx: e.ctx, q: q, dev: e.dev})
}

// times returns the device times of ev's completed command.
func times(ev driver.Event) (start, end uint64, err error) {
	if sp, ok := ev.(driver.Spanner); ok {
		s, t, done, err := sp.Span()
		if err == nil && !done {
			err = errors.New("Span: not done after Finish")
		}
		return s, t, err
	}
	tm, err := ev.Profile()
	return tm.Started, tm.Ended, err
}

// RunMulti runs the suite's multi-device part on a context of b over devs
// (at least two; a backend may accept one device twice): a program built
// for every device, and work on one device's queue that waits for work on
// another's, through the context's buffers.
func RunMulti(t *testing.T, b driver.Backend, devs []driver.DeviceInfo) {
	ctx, err := b.NewContext(devs)
	if err != nil {
		t.Fatalf("NewContext over %d devices: %v", len(devs), err)
	}
	defer func() {
		if err := ctx.Release(); err != nil {
			t.Errorf("context Release: %v", err)
		}
	}()
	p, err := ctx.BuildProgram(source, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	bins, err := p.Binaries()
	if err != nil || len(bins) != len(devs) {
		t.Fatalf("Binaries: %d for %d devices, %v", len(bins), len(devs), err)
	}
	lp, err := ctx.LoadProgram(bins, "")
	if err != nil {
		t.Fatalf("LoadProgram on %d devices: %v", len(devs), err)
	}
	lp.Release()
	qs := make([]driver.Queue, len(devs))
	for i := range devs {
		if qs[i], err = ctx.NewQueue(i, false); err != nil {
			t.Fatal(err)
		}
		defer qs[i].Release()
	}
	const n = 4096
	x, err := ctx.NewBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()
	y, err := ctx.NewBuffer(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Release()
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i), 0
	}
	xb, yb := le(xs), le(ys)
	if _, err := qs[0].WriteBuffer(x, true, 0, 4*n, unsafe.Pointer(&xb[0]), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := qs[0].WriteBuffer(y, true, 0, 4*n, unsafe.Pointer(&yb[0]), nil); err != nil {
		t.Fatal(err)
	}
	// Each device in turn adds x to y, after the one before it.
	var prev driver.Event
	for i, q := range qs {
		k, err := p.NewKernel("axpy")
		if err != nil {
			t.Fatal(err)
		}
		defer k.Release()
		k.SetArgBuffer(0, y)
		k.SetArgBuffer(1, x)
		k.SetArgScalar(2, 4, uint64(math.Float32bits(1)))
		k.SetArgScalar(3, 4, n)
		var wait []driver.Event
		if prev != nil {
			wait = []driver.Event{prev}
		}
		ev, err := q.EnqueueKernel(k, driver.NDRange{Dims: 1, Global: [3]int{n}, Local: [3]int{64}}, wait)
		if err != nil {
			t.Fatalf("device %d: %v", i, err)
		}
		if prev != nil {
			prev.Release()
		}
		prev = ev
	}
	out := make([]byte, 4*n)
	if _, err := qs[0].ReadBuffer(y, true, 0, 4*n, unsafe.Pointer(&out[0]), []driver.Event{prev}); err != nil {
		t.Fatal(err)
	}
	prev.Release()
	for i, v := range floats(out) {
		if want := float32(len(devs)) * float32(i); v != want {
			t.Fatalf("y[%d] = %v after %d devices, want %v", i, v, len(devs), want)
		}
	}
}

// testLaunchArgs launches through driver.ArgLauncher, where the backend has
// it: a record's changed arguments set and the kernel launched in one call,
// with buffers, scalars, values of more than 8 bytes and local memory, and
// a second launch that changes one argument.
func testLaunchArgs(t *testing.T, e *env) {
	al, ok := e.q.(driver.ArgLauncher)
	if !ok {
		t.Skip("the queue is no ArgLauncher")
	}
	handle := func(b driver.Buffer) uint64 {
		nb, ok := b.(driver.NativeBuffer)
		if !ok {
			t.Skip("buffers are no NativeBuffer")
		}
		return nb.Handle()
	}
	ptr := uint32(unsafe.Sizeof(uintptr(0)))
	k := e.kernel("axpy")
	y, x := e.buffer(4*64), e.buffer(4*64)
	xs := make([]float32, 64)
	for i := range xs {
		xs[i] = float32(i)
	}
	e.write(x, 0, le(xs))
	e.write(y, 0, make([]byte, 4*64))
	a := &driver.Args{Slots: []driver.Arg{
		{Kind: driver.ArgBuffer, Changed: true, Size: ptr, Bits: handle(y)},
		{Kind: driver.ArgBuffer, Changed: true, Size: ptr, Bits: handle(x)},
		{Kind: driver.ArgScalar, Changed: true, Size: 4, Bits: uint64(math.Float32bits(2))},
		{Kind: driver.ArgScalar, Changed: true, Size: 4, Bits: 64},
	}, Changed: 4}
	r := driver.NDRange{Dims: 1, Global: [3]int{64}, Local: [3]int{32}}
	if _, err := al.LaunchArgs(k, a, &r, nil, false); err != nil {
		t.Fatal(err)
	}
	if a.Changed != 0 || a.Slots[2].Changed {
		t.Errorf("marks not cleared: %+v", a)
	}
	a.Slots[2].Bits, a.Slots[2].Changed, a.Changed = uint64(math.Float32bits(0.5)), true, 1
	ev, err := al.LaunchArgs(k, a, &r, nil, true)
	if err != nil || ev == nil {
		t.Fatalf("LaunchArgs with an event: %v, %v", ev, err)
	}
	ev.Wait()
	ev.Release()
	for i, v := range floats(e.read(y, 0, 4*64)) {
		if want := 2.5 * float32(i); v != want {
			t.Fatalf("y[%d] = %v, want %v", i, v, want)
		}
	}
	// A struct by value in Bytes, and __local memory.
	kv := e.kernel("values")
	o := e.buffer(40)
	type S struct {
		X float32
		Y int32
		Z float64
	}
	sv := S{1.5, 2, 0.25}
	bytes := make([]byte, 16+8+16)
	copy(bytes, unsafe.Slice((*byte)(unsafe.Pointer(&sv)), 16))
	copy(bytes[16:], le([2]float32{3, 4}))
	copy(bytes[24:], le([4]int32{5, 6, 7, 8}))
	va := &driver.Args{Slots: []driver.Arg{
		{Kind: driver.ArgBuffer, Changed: true, Size: ptr, Bits: handle(o)},
		{Kind: driver.ArgScalar, Changed: true, Size: 16, Bits: 0},
		{Kind: driver.ArgScalar, Changed: true, Size: 8, Bits: uint64(math.Float32bits(3)) | uint64(math.Float32bits(4))<<32},
		{Kind: driver.ArgScalar, Changed: true, Size: 16, Bits: 24},
		{Kind: driver.ArgScalar, Changed: true, Size: 8, Bits: 1 << 40},
		{Kind: driver.ArgScalar, Changed: true, Size: 1, Bits: 0xfe},
	}, Bytes: bytes, Changed: 6}
	if _, err := al.LaunchArgs(kv, va, &driver.NDRange{Dims: 1, Global: [3]int{1}}, nil, false); err != nil {
		t.Fatal(err)
	}
	var got [5]float64
	binary.Read(bytesReader(e.read(o, 0, 40)), binary.LittleEndian, &got)
	if want := [5]float64{3.75, 4, 7, 1 << 40, -2}; got != want {
		t.Errorf("values through LaunchArgs %v, want %v", got, want)
	}
	const l = 64
	kl := e.kernel("locals")
	out := e.buffer(4 * l)
	la := &driver.Args{Slots: []driver.Arg{
		{Kind: driver.ArgBuffer, Changed: true, Size: ptr, Bits: handle(out)},
		{Kind: driver.ArgLocal, Changed: true, Size: 4 * l},
		{Kind: driver.ArgScalar, Changed: true, Size: 4, Bits: 7},
		{Kind: driver.ArgLocal, Changed: true, Size: 8 * l},
		{Kind: driver.ArgLocal, Changed: true, Size: l},
	}, Changed: 5}
	if _, err := al.LaunchArgs(kl, la, &driver.NDRange{Dims: 1, Global: [3]int{l}, Local: [3]int{l}}, nil, false); err != nil {
		t.Fatal(err)
	}
	for i, v := range floats(e.read(out, 0, 4*l)) {
		r := l - 1 - i
		if want := float32(r) + float32(2*r) + 1 + float32(int8(r)) + 7; v != want {
			t.Fatalf("locals through LaunchArgs: out[%d] = %v, want %v", i, v, want)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
