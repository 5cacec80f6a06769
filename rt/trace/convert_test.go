package trace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recordFile returns the record file of a small workload, as a process
// that never closed its Tracer leaves it.
func recordFile(t testing.TB) []byte { return recordFileOf(t, 20) }

// recordFileOf is recordFile with iters iterations of the workload.
func recordFileOf(t testing.TB, iters int) []byte {
	path := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Open("perfetto:"+path+",device=all", nil)
	if err != nil {
		t.Fatal(err)
	}
	workload(tr, iters)
	tr.Range("solve").End()
	tr.Mark("done")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	// Drop the empty slots after the last record.
	end := len(bytes.TrimRight(data, "\x00"))
	return data[:(end+slotSize-1)/slotSize*slotSize]
}

// TestConvertCutOff converts a record file cut off at every 61st byte, as
// a copy taken mid-write or a disk that filled would leave it: each
// converts to JSON that parses, with no more slices than the whole file.
func TestConvertCutOff(t *testing.T) {
	data := recordFile(t)
	var whole bytes.Buffer
	if err := Convert(&whole, data); err != nil {
		t.Fatal(err)
	}
	var all []jsonEvent
	if err := json.Unmarshal(whole.Bytes(), &all); err != nil {
		t.Fatal(err)
	}
	for cut := slotSize; cut < len(data); cut += 61 {
		var js bytes.Buffer
		if err := Convert(&js, data[:cut]); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		var evs []jsonEvent
		if err := json.Unmarshal(js.Bytes(), &evs); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(evs) > len(all) {
			t.Fatalf("cut at %d: %d events, more than the whole file's %d", cut, len(evs), len(all))
		}
	}
	// Damage: every 101st byte flipped in turn, the header's included.
	for at := 0; at < len(data); at += 101 {
		bad := bytes.Clone(data)
		bad[at] ^= 0xa5
		var js bytes.Buffer
		if err := Convert(&js, bad); err == nil && !json.Valid(js.Bytes()) {
			t.Fatalf("byte %d flipped: invalid JSON", at)
		}
	}
	if err := Convert(&bytes.Buffer{}, data[:slotSize-1]); err == nil {
		t.Error("a file shorter than its header converts")
	}
}

// FuzzConvert feeds Convert damaged record files: it must return an error
// or JSON that parses, never panic.
func FuzzConvert(f *testing.F) {
	data := recordFile(f)
	f.Add(data[:min(len(data), 4096)], 100, byte(0xff))
	f.Add(data[:min(len(data), 4096)], 64, byte(3))
	f.Fuzz(func(t *testing.T, data []byte, at int, b byte) {
		data = bytes.Clone(data)
		if at >= 0 && at < len(data) {
			data[at] ^= b
		}
		var js bytes.Buffer
		if err := Convert(&js, data); err != nil {
			return
		}
		if IsRecordFile(data) && !json.Valid(js.Bytes()) {
			t.Fatalf("invalid JSON from a damaged record file")
		}
	})
}

// BenchmarkConvert measures the conversion of a record file to JSON, which
// Close does for the perfetto subscriber and dgen trace for a file left by
// a crash: per event of the JSON written (a slice, a flow's end, a counter
// value), for a workload of 20,000 iterations of three commands, two
// memory events and their edges.
//
//	go test ./rt/trace -run '^$' -bench Convert
func BenchmarkConvert(b *testing.B) {
	data := recordFileOf(b, 20000)
	var js bytes.Buffer
	if err := Convert(&js, data); err != nil {
		b.Fatal(err)
	}
	var evs []jsonEvent
	if err := json.Unmarshal(js.Bytes(), &evs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := Convert(io.Discard, data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
	b.ReportMetric(float64(len(evs)), "events")
}

// TestSortByTime: records come out in the order of their times, and
// records of equal times in the order they came in.
func TestSortByTime(t *testing.T) {
	mark := func(at, id uint64) rawRec { return rawRec{kind: recMark, w: [7]uint64{1: at, 2: id}} }
	tests := []struct {
		name string
		in   []rawRec
	}{
		{"sorted", []rawRec{mark(1, 0), mark(2, 1), mark(2, 2), mark(3, 3)}},
		{"reversed", []rawRec{mark(3, 0), mark(2, 1), mark(2, 2), mark(1, 3)}},
		{"ties first", []rawRec{mark(5, 0), mark(5, 1), mark(4, 2), mark(5, 3), mark(4, 4)}},
		{"empty", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := slices.Clone(tt.in)
			sortByTime(recs)
			want := slices.Clone(tt.in)
			slices.SortStableFunc(want, func(a, b rawRec) int { return int(a.w[1]) - int(b.w[1]) })
			if !slices.Equal(recs, want) {
				t.Errorf("got %v, want %v", recs, want)
			}
		})
	}
}
