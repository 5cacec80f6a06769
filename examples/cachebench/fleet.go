package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"
)

// FleetReport is what cachebench -fleet prints. Times are program ready
// (Build) in milliseconds: median, min and max over the repetitions (-runs).
type FleetReport struct {
	Date   string `json:"date"`
	CPUs   int    `json:"cpus"`
	Device string `json:"device"`
	Reps   int    `json:"reps"`
	// Cold: empty local cache, empty remote (the process builds and
	// publishes). WarmRemote: empty local cache, warm remote. WarmDisk:
	// warm local cache.
	Cold       Spread `json:"cold_ms"`
	WarmRemote Spread `json:"warm_remote_ms"`
	WarmDisk   Spread `json:"warm_disk_ms"`
	// RemoteOverDisk is WarmRemote over WarmDisk, per repetition (goal
	// at most 1.5).
	RemoteOverDisk Spread `json:"remote_over_disk"`
	// The fleet start: Procs processes with empty local caches start at
	// once against one Redis holding nothing for the program.
	Procs        int     `json:"procs"`
	FleetBuilds  int64   `json:"fleet_builds"` // goal: 1
	SlowestMs    float64 `json:"fleet_slowest_ready_ms"`
	FleetColdMs  float64 `json:"fleet_one_cold_ms"`       // one cold build in the same run, just before
	SlowestRatio float64 `json:"fleet_slowest_over_cold"` // goal at most 1.2
	FleetErrors  int64   `json:"fleet_remote_errors"`
}

// Spread is a median with its range.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func spread(xs []float64) Spread {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return Spread{}
	}
	return Spread{Median: s[len(s)/2], Min: s[0], Max: s[len(s)-1]}
}

func runFleet(redisServer string, procs, reps int) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "cachebench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	url, stop, err := startRedis(redisServer, tmp)
	if err != nil {
		return err
	}
	defer stop()
	base := append(os.Environ(), "DGEN_CACHE_REMOTE="+url, "DGEN_CACHE_REMOTE_KEY=cachebench fleet key", "DGEN_CACHE_PERSISTENT=1",
		"POCL_KERNEL_CACHE=0", "CUDA_CACHE_DISABLE=1")
	child := func(dir, nonce string) (Phase, error) {
		cmd := exec.Command(self, "-child")
		// Each process is a node of its own, with its own dgen directory
		// and a fresh PoCL directory (PoCL links kernels there even with
		// its cache off), so that only dgen's cache differs between phases.
		pocl, err := os.MkdirTemp(tmp, "pocl-")
		if err != nil {
			return Phase{}, err
		}
		// The nonce, a build option, makes the cache key new (options
		// are part of every key).
		cmd.Env = append(base[:len(base):len(base)], "DGEN_CACHE_DIR="+dir, "POCL_CACHE_DIR="+pocl,
			"DGEN_PROGRAM_COMPILE_OPTIONS=-D CACHEBENCH_NONCE_"+nonce)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		var p Phase
		if err == nil {
			err = json.Unmarshal(out, &p)
		}
		if err == nil && p.Error != "" {
			err = fmt.Errorf("%s", p.Error)
		}
		return p, err
	}
	rep := FleetReport{Date: time.Now().Format(time.DateOnly), CPUs: runtime.NumCPU(), Reps: reps, Procs: procs}
	var cold, remote, disk, ratio []float64
	run0 := strconv.FormatInt(time.Now().UnixNano(), 36) // an identifier part
	for r := 0; r < reps; r++ {
		nonce := run0 + "_" + strconv.Itoa(r)
		c, err := child(filepath.Join(tmp, nonce, "a"), nonce) // builds and publishes
		if err != nil {
			return fmt.Errorf("cold: %w", err)
		}
		b := filepath.Join(tmp, nonce, "b")
		w, err := child(b, nonce) // empty local cache, warm remote
		if err != nil {
			return fmt.Errorf("warm remote: %w", err)
		}
		d, err := child(b, nonce) // warm local cache
		if err != nil {
			return fmt.Errorf("warm disk: %w", err)
		}
		if c.Builds != 1 || w.Builds != 0 || w.RemoteHits != 1 || d.Builds != 0 || d.DiskHits != 1 {
			return fmt.Errorf("repetition %d: phases did not do what they measure: %+v %+v %+v", r, c, w, d)
		}
		rep.Device = c.Device
		cold, remote, disk = append(cold, c.ProgramReadyMs), append(remote, w.ProgramReadyMs), append(disk, d.ProgramReadyMs)
		ratio = append(ratio, w.ProgramReadyMs/d.ProgramReadyMs)
	}
	rep.Cold, rep.WarmRemote, rep.WarmDisk, rep.RemoteOverDisk = spread(cold), spread(remote), spread(disk), spread(ratio)

	// One cold build of the fleet's program shape, then the fleet.
	nonce := run0 + "_fleet"
	c, err := child(filepath.Join(tmp, "fleet-one"), nonce+"_one")
	if err != nil {
		return fmt.Errorf("fleet cold: %w", err)
	}
	rep.FleetColdMs = c.ProgramReadyMs
	phases := make([]Phase, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for i := range phases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			phases[i], errs[i] = child(filepath.Join(tmp, "fleet", strconv.Itoa(i)), nonce)
		}()
	}
	wg.Wait()
	for i, p := range phases {
		if errs[i] != nil {
			return fmt.Errorf("fleet process %d: %w", i, errs[i])
		}
		rep.FleetBuilds += p.Builds
		rep.FleetErrors += p.RemoteErrors
		rep.SlowestMs = max(rep.SlowestMs, p.ProgramReadyMs)
	}
	rep.SlowestRatio = rep.SlowestMs / rep.FleetColdMs
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// startRedis starts redis-server without persistence on a free loopback
// port and returns its URL.
func startRedis(prog, dir string) (url string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(prog, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--logfile", filepath.Join(dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w", prog, err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "redis://" + addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("%s did not listen on %s", prog, addr)
}
