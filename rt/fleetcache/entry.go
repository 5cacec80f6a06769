package fleetcache

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// Entry layout, little endian:
//
//	0  [8]byte magic "dgenFlt1"
//	8  uint8   flags (flagSigned)
//	9  [7]byte zero
//	16 uint32  key length
//	20 uint32  zero
//	24 uint64  binary length
//	32         key, then binary
//	end-32     SHA-256 of everything before it, or HMAC-SHA-256 when signed
const (
	entryMagic  = "dgenFlt1"
	entryHeader = 32
	trailerSize = sha256.Size
	flagSigned  = 1
	addrDomain  = "dgen fleet cache v1\x00"
)

// ErrRejected reports a remote entry that failed its checks: truncated,
// altered, unsigned or wrongly signed where a signature is required, or
// holding another key. It is never loaded.
var ErrRejected = errors.New("remote entry rejected")

// address returns the hexadecimal SHA-256 that names the entry of key.
func address(key []byte) string {
	h := sha256.New()
	h.Write([]byte(addrDomain))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil))
}

// sealEntry builds the entry of key and bin, signed if secret is set.
func sealEntry(key, bin, secret []byte) []byte {
	b := make([]byte, entryHeader, entryHeader+len(key)+len(bin)+trailerSize)
	copy(b, entryMagic)
	if len(secret) > 0 {
		b[8] = flagSigned
	}
	binary.LittleEndian.PutUint32(b[16:], uint32(len(key)))
	binary.LittleEndian.PutUint64(b[24:], uint64(len(bin)))
	b = append(b, key...)
	b = append(b, bin...)
	return append(b, trailer(b, secret)...)
}

func trailer(body, secret []byte) []byte {
	if len(secret) > 0 {
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		return m.Sum(nil)
	}
	s := sha256.Sum256(body)
	return s[:]
}

// openEntry checks an entry fetched for key and returns its binary. The
// error, if any, wraps ErrRejected and says what is wrong.
func openEntry(e, key, secret []byte) ([]byte, error) {
	reject := func(why string) ([]byte, error) { return nil, &rejection{why: why} }
	if len(e) < entryHeader+trailerSize {
		return reject("truncated")
	}
	if string(e[:8]) != entryMagic {
		return reject("bad magic")
	}
	for _, z := range append(append([]byte{}, e[9:16]...), e[20:24]...) {
		if z != 0 {
			return reject("bad header")
		}
	}
	signed := e[8] == flagSigned
	if e[8]&^flagSigned != 0 {
		return reject("bad header")
	}
	kl := uint64(binary.LittleEndian.Uint32(e[16:]))
	bl := binary.LittleEndian.Uint64(e[24:])
	if kl > uint64(len(e)) || bl > uint64(len(e)) || entryHeader+kl+bl+trailerSize != uint64(len(e)) {
		return reject("size mismatch")
	}
	switch {
	case len(secret) > 0 && !signed:
		return reject("unsigned")
	case len(secret) == 0 && signed:
		return nil, &rejection{why: "signed, and no DGEN_CACHE_REMOTE_KEY to check it", signed: true}
	}
	body, sum := e[:len(e)-trailerSize], e[len(e)-trailerSize:]
	if !hmac.Equal(sum, trailer(body, secret)) {
		if signed {
			return nil, &rejection{why: "bad signature", signed: true}
		}
		return reject("checksum mismatch")
	}
	if string(e[entryHeader:entryHeader+kl]) != string(key) {
		return reject("holds another key")
	}
	return e[entryHeader+kl : entryHeader+kl+bl], nil
}

// rejection is an ErrRejected; signed reports an entry that is signed
// but that this node cannot verify (a signature by another key, or no key
// here), which it must not replace.
type rejection struct {
	why    string
	signed bool
}

func (r *rejection) Error() string        { return "remote entry rejected: " + r.why }
func (r *rejection) Is(target error) bool { return target == ErrRejected }
