package diskcache

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// Device identifies a device and the software that builds for it. Two
// devices with equal fields are assumed to accept the same binaries.
type Device struct {
	Platform      string `json:"platform"`       // platform name
	Name          string `json:"name"`           // device name
	Version       string `json:"version"`        // device version
	DriverVersion string `json:"driver_version"` // driver version
}

// Hash returns the device hash: the xxhash64 of the four fields.
func (d Device) Hash() uint64 { return xxhash.Sum64(d.appendTo(nil)) }

func (d Device) appendTo(b []byte) []byte {
	b = appendString(b, d.Platform)
	b = appendString(b, d.Name)
	b = appendString(b, d.Version)
	return appendString(b, d.DriverVersion)
}

// Key identifies a program binary. All fields but ProgramName are part of
// its identity.
type Key struct {
	// Device is the device the binary was built for.
	Device Device
	// ImageID is the stable id of the device image (the program's id).
	ImageID string
	// ImageHash is a hash of the device image source used as input to the
	// build. A changed source gives a different key.
	ImageHash uint64
	// SpecConsts holds the specialization-constant values, encoded by the
	// caller in a stable order.
	SpecConsts []byte
	// Options holds the complete build options.
	Options string
	// ProgramName is a human name for listings; it is stored but is not
	// part of the identity.
	ProgramName string
}

// sameIdentity reports whether k and o identify the same binary.
func (k *Key) sameIdentity(o *Key) bool {
	return k.Device == o.Device && k.ImageID == o.ImageID && k.ImageHash == o.ImageHash &&
		bytes.Equal(k.SpecConsts, o.SpecConsts) && k.Options == o.Options
}

const keyEncodingVersion = 1

// encode returns the full key as stored in <n>.src.
func (k *Key) encode() []byte {
	n := 32 + len(k.Device.Platform) + len(k.Device.Name) + len(k.Device.Version) +
		len(k.Device.DriverVersion) + len(k.ImageID) + len(k.SpecConsts) + len(k.Options) + len(k.ProgramName)
	b := make([]byte, 0, n+8*8)
	b = binary.AppendUvarint(b, keyEncodingVersion)
	b = k.Device.appendTo(b)
	b = appendString(b, k.ImageID)
	b = binary.LittleEndian.AppendUint64(b, k.ImageHash)
	b = appendString(b, string(k.SpecConsts))
	b = appendString(b, k.Options)
	return appendString(b, k.ProgramName)
}

// decodeKey parses the encoding made by encode.
func decodeKey(b []byte) (Key, error) {
	d := decoder{b: b}
	var k Key
	if v := d.uvarint(); v != keyEncodingVersion {
		return k, corruption(fmt.Sprintf("unknown key encoding %d", v))
	}
	k.Device.Platform = d.str()
	k.Device.Name = d.str()
	k.Device.Version = d.str()
	k.Device.DriverVersion = d.str()
	k.ImageID = d.str()
	k.ImageHash = d.u64()
	if s := d.str(); s != "" {
		k.SpecConsts = []byte(s)
	}
	k.Options = d.str()
	k.ProgramName = d.str()
	if d.bad || len(d.b) != 0 {
		return Key{}, corruption("malformed key")
	}
	return k, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.b)) {
		d.bad = true
		d.b = nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) u64() uint64 {
	if d.bad || len(d.b) < 8 {
		d.bad = true
		d.b = nil
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// hashFunc hashes key parts into directory names. Tests replace it to force
// collisions.
type hashFunc func([]byte) uint64

// keyDirParts returns the four directory names of a key.
func keyDirParts(h hashFunc, k *Key) [4]string {
	img := appendString(nil, k.ImageID)
	img = binary.LittleEndian.AppendUint64(img, k.ImageHash)
	return [4]string{
		hex16(h(k.Device.appendTo(nil))),
		hex16(h(img)),
		hex16(h(k.SpecConsts)),
		hex16(h([]byte(k.Options))),
	}
}

func hex16(v uint64) string { return fmt.Sprintf("%016x", v) }

func isHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
