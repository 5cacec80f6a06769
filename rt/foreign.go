package rt

import "fmt"

// sameContext checks that an object of context of, named what, may be
// used with context c: an error wrapping ErrInvalidArgument that names
// both contexts' devices if not. OpenCL leaves the use of one context's
// objects in another undefined.
func (c *Context) sameContext(what string, of *Context) error {
	if of == c {
		return nil
	}
	return fmt.Errorf("%w: %s belongs to the context on %s, not to this one on %s", ErrInvalidArgument, what, of.deviceLabel(), c.deviceLabel())
}
