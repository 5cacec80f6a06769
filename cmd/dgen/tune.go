package main

import (
	"encoding/json"
	"strings"

	"github.com/dgen-go/dgen/rt/diskcache"
)

// tunePrefix starts the image id of a tuning record (rt.SpecConst.Tune).
const tunePrefix = "dgen.tune:"

// tuneLabel returns what `dgen cache ls` shows for the entry e in its
// PROGRAM column: for a tuning record, its constant and winner (read from
// the record; "?" when it cannot be read), otherwise the program's name.
func tuneLabel(c *diskcache.Cache, e diskcache.EntryInfo) string {
	if !strings.HasPrefix(e.ImageID, tunePrefix) {
		return e.ProgramName
	}
	winner := "?"
	if b, err := c.ReadBinary(e); err == nil {
		var rec struct {
			Winner string `json:"winner"`
		}
		if json.Unmarshal(b, &rec) == nil && rec.Winner != "" {
			winner = rec.Winner
		}
	}
	return e.ProgramName + ": winner " + winner
}
