package progcache

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// specSet is an immutable set of specialization-constant values, sorted by
// name, interned per cache: equal sets are the same pointer, which the
// fast kernel cache compares.
type specSet struct {
	vals []SpecValue
	enc  string // canonical encoding
}

// encodeSpecs returns the canonical encoding of vals, sorted by name: for
// each value, its name and value, each preceded by its length as a uvarint.
func encodeSpecs(vals []SpecValue) string {
	var b []byte
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(len(v.Name)))
		b = append(b, v.Name...)
		b = binary.AppendUvarint(b, uint64(len(v.Value)))
		b = append(b, v.Value...)
	}
	return string(b)
}

func byName(v SpecValue, n string) int { return strings.Compare(v.Name, n) }

// SetSpec sets the specialization constant name to value for every
// program built or looked up from now on; the caller has checked both.
func (c *Cache[K]) SetSpec(name, value string) {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	c.storeSpecs(c.internSpecs(withValue(slices.Clone(c.spec.Load().vals), SpecValue{name, value})))
}

// withValue returns vals, sorted by name, with v in place of the value of
// its name.
func withValue(vals []SpecValue, v SpecValue) []SpecValue {
	i, found := slices.BinarySearchFunc(vals, v.Name, byName)
	if found {
		vals[i].Value = v.Value
		return vals
	}
	return slices.Insert(vals, i, v)
}

// Overlay returns a copy of vals, sorted by name, with the values of over
// in place of those of their names.
func Overlay(vals, over []SpecValue) []SpecValue {
	vals = slices.Clone(vals)
	for _, v := range over {
		vals = withValue(vals, v)
	}
	return vals
}

// overlay returns the interned set of base's values with over in their
// place (a launch's own values, KernelWith). Interned sets live as long as
// the cache: one per set of values that the cache's values or a launch's
// own have made, as a program is built for each.
func (c *Cache[K]) overlay(base *specSet, over []SpecValue) *specSet {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	return c.internSpecs(Overlay(base.vals, over))
}

// storeSpecs makes set the current values; called with specMu held. A
// change starts a new generation: the first fast kernel hit of each kernel
// under it counts as a memory hit.
func (c *Cache[K]) storeSpecs(set *specSet) {
	if c.spec.Swap(set) != set {
		c.specGen.Add(1)
		c.epoch.Add(1)
	}
}

// ClearSpec removes the value of the specialization constant name, so that
// programs see its default again.
func (c *Cache[K]) ClearSpec(name string) {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	vals := slices.DeleteFunc(slices.Clone(c.spec.Load().vals), func(v SpecValue) bool { return v.Name == name })
	c.storeSpecs(c.internSpecs(vals))
}

// Specs returns the specialization-constant values set, sorted by name.
// The caller must not modify the slice.
func (c *Cache[K]) Specs() []SpecValue { return c.spec.Load().vals }

// internSpecs returns the interned set of vals (sorted); called with
// specMu held.
func (c *Cache[K]) internSpecs(vals []SpecValue) *specSet {
	enc := encodeSpecs(vals)
	if s, ok := c.specSets[enc]; ok {
		return s
	}
	s := &specSet{vals: vals, enc: enc}
	c.specSets[enc] = s
	return s
}

// resolve returns the values that a program using the constants uses sees:
// uses gives the constants with their defaults, which the set's values
// override; nil uses means every value of the set.
func (s *specSet) resolve(uses []SpecValue) []SpecValue {
	if uses == nil {
		return s.vals
	}
	out := make([]SpecValue, 0, len(uses))
	for _, u := range uses {
		v := u
		if i, ok := slices.BinarySearchFunc(s.vals, u.Name, byName); ok {
			v.Value = s.vals[i].Value
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b SpecValue) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b SpecValue) bool { return a.Name == b.Name })
}

// checkSet reports the first specialization constant of k that has neither
// a value set nor a default (an empty Value): building with it would
// define the macro empty, or leave it undefined, and compute with a
// constant nobody chose.
func (k *key) checkSet() error {
	for _, v := range k.specs {
		if v.Value == "" {
			return fmt.Errorf("build program %q: %w: specialization constant %s has neither a value set (rt.SpecConst.Set) nor a default (//dgen:specconst default=VALUE)", k.name, ErrInvalidArgument, v.Name)
		}
	}
	return nil
}
