package trace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// recordFile returns the record file of a small workload, as a process
// that never closed its Tracer leaves it.
func recordFile(t testing.TB) []byte {
	path := filepath.Join(t.TempDir(), "trace.json")
	tr, err := Open("perfetto:"+path+",device=all", nil)
	if err != nil {
		t.Fatal(err)
	}
	workload(tr, 20)
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
