package rt

import (
	"fmt"
	"reflect"
)

// checkPlain returns an error unless t is plain data that can be copied to a
// device byte for byte: booleans, numbers, and arrays and structs of them.
// Pointers, slices, maps, strings, interfaces, channels and functions are not.
func checkPlain(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		if err := checkPlain(t.Elem()); err != nil {
			return fmt.Errorf("array element of %v: %w", t, err)
		}
		return nil
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := checkPlain(f.Type); err != nil {
				return fmt.Errorf("field %s of %v: %w", f.Name, t, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: %v is not plain data (a %s)", ErrInvalidArgument, t, t.Kind())
}
