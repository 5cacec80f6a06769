package gen

import (
	buildconstraint "go/build/constraint"
	"slices"
	"sort"
)

// unixOS are the GOOS values that the build tag "unix" matches.
var unixOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
	"hurd": true, "illumos": true, "ios": true, "linux": true, "netbsd": true, "openbsd": true, "solaris": true}

// implies reports whether every build that satisfies the constraint a (of
// constraint's form, "" for every build) also satisfies b: every GOOS and
// GOARCH pair is tried, with every setting of the other tags the two name.
// An expression that does not parse implies only itself.
func implies(a, b string) bool {
	if b == "" || a == b {
		return true
	}
	ea, errA := parseConstraint(a)
	eb, errB := parseConstraint(b)
	if errA != nil || errB != nil {
		return false
	}
	free := map[string]bool{}
	for _, e := range []buildconstraint.Expr{ea, eb} {
		if e == nil {
			continue
		}
		e.Eval(func(tag string) bool {
			if !knownOS[tag] && !knownArch[tag] && tag != "unix" {
				free[tag] = true
			}
			return true
		})
	}
	tags := make([]string, 0, len(free))
	for t := range free {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	if len(tags) > 10 {
		return false // too many to try: only an equal constraint is safe
	}
	for goos := range knownOS {
		for goarch := range knownArch {
			for bits := 0; bits < 1<<len(tags); bits++ {
				ok := func(tag string) bool {
					switch {
					case knownOS[tag]:
						return tag == goos
					case knownArch[tag]:
						return tag == goarch
					case tag == "unix":
						return unixOS[goos]
					}
					return bits&(1<<slices.Index(tags, tag)) != 0
				}
				if (ea == nil || ea.Eval(ok)) && !eb.Eval(ok) {
					return false
				}
			}
		}
	}
	return true
}

// parseConstraint parses a constraint of constraint's form; nil for "".
func parseConstraint(s string) (buildconstraint.Expr, error) {
	if s == "" {
		return nil, nil
	}
	return buildconstraint.Parse("//go:build " + s)
}
