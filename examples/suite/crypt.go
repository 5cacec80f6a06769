package main

import (
	"errors"
	"math/rand/v2"

	"github.com/dgen-go/dgen/rt"
)

// IdeaKey is an IDEA key schedule: 52 16-bit subkeys, as OpenCL C lays out
// struct IdeaKey.
type IdeaKey struct {
	Z [52]int32
}

// EncryptKey and DecryptKey are the key schedules of a run.
//
//dgen:global host_access=write
var EncryptKey rt.DeviceGlobal[IdeaKey]

// DecryptKey is the inverse schedule of EncryptKey.
//
//dgen:global host_access=write
var DecryptKey rt.DeviceGlobal[IdeaKey]

// Crypt is the image of crypt.cl.
//
//dgen:program source=crypt.cl
var Crypt rt.Program

// Encrypt enciphers Blocks 8-byte blocks of In into Out.
//
//dgen:kernel program=Crypt name=idea_encrypt
type Encrypt struct {
	Out    rt.Buffer[uint8] `dgen:"out"`
	In     rt.Buffer[uint8]
	Blocks int32
}

// Decrypt deciphers Blocks 8-byte blocks of In into Out.
//
//dgen:kernel program=Crypt name=idea_decrypt
type Decrypt struct {
	Out    rt.Buffer[uint8] `dgen:"out"`
	In     rt.Buffer[uint8]
	Blocks int32
}

// crypt enciphers and deciphers Size.N 8-byte blocks with IDEA (JGF crypt;
// size B, 20 MB, on the GPU), allocating the cipher text and the result.
var crypt = Program{
	Name:   "crypt",
	Source: "jgf/crypt/crypt.fut",
	Datasets: []Dataset{
		{Name: "medium", Futhark: 2.12, GPU: Size{N: 2_500_000}, Small: Size{N: 50_000}},
	},
	Test: Size{N: 1001},
	New:  newCrypt,
}

type cryptCase struct {
	e             *Env
	plain         []uint8
	enc, dec      IdeaKey
	in            rt.Buffer[uint8]
	cipher, clear rt.Buffer[uint8]
}

func newCrypt(e *Env, s Size, seed uint64) (Case, error) {
	r := rand.New(rand.NewPCG(seed, 0x1dea))
	c := &cryptCase{e: e, plain: make([]uint8, 8*s.N)}
	for i := range c.plain {
		c.plain[i] = uint8(r.Uint32())
	}
	var user [8]uint16
	for i := range user {
		user[i] = uint16(r.Uint32())
	}
	c.enc = ideaEncryptKey(user)
	c.dec = ideaDecryptKey(c.enc)
	var err error
	if c.in, err = upload(e, c.plain); err != nil {
		return nil, err
	}
	if err := errors.Join(EncryptKey.Write(e.Q, c.enc), DecryptKey.Write(e.Q, c.dec)); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func (c *cryptCase) Run() error {
	if err := free(c.cipher, c.clear); err != nil {
		return err
	}
	c.cipher, c.clear = rt.Buffer[uint8]{}, rt.Buffer[uint8]{}
	n := len(c.plain) / 8
	enc := Encrypt{In: c.in, Blocks: int32(n)}
	if err := allocOut(c.e, enc.AllocOut, &enc.Out, 8*n); err != nil {
		return err
	}
	c.cipher = enc.Out
	if err := enc.Enqueue(c.e.Q, rt.Range1(n)); err != nil {
		return err
	}
	dec := Decrypt{In: enc.Out, Blocks: int32(n)}
	if err := allocOut(c.e, dec.AllocOut, &dec.Out, 8*n); err != nil {
		return err
	}
	c.clear = dec.Out
	if err := dec.Enqueue(c.e.Q, rt.Range1(n)); err != nil {
		return err
	}
	return c.e.Q.Finish()
}

func (c *cryptCase) Verify() error {
	cipher, err := download(c.e, c.cipher)
	if err != nil {
		return err
	}
	clear, err := download(c.e, c.clear)
	if err != nil {
		return err
	}
	want := make([]uint8, len(c.plain))
	for i := 0; i < len(want); i += 8 {
		ideaBlock(want[i:i+8], c.plain[i:i+8], &c.enc)
	}
	return errors.Join(equal("cipher text", cipher, want), equal("deciphered text", clear, c.plain))
}

func (c *cryptCase) Close() error { return free(c.in, c.cipher, c.clear) }

// ideaMul multiplies modulo 2^16+1, where 0 stands for 2^16.
func ideaMul(a, b uint32) uint32 {
	switch {
	case a == 0:
		return (0x10001 - b) & 0xffff
	case b == 0:
		return (0x10001 - a) & 0xffff
	}
	p := a * b
	lo, hi := p&0xffff, p>>16
	r := lo - hi
	if lo < hi {
		r++
	}
	return r & 0xffff
}

// ideaBlock enciphers one 8-byte block with key, as idea_block does.
func ideaBlock(out, in []uint8, key *IdeaKey) {
	x1 := uint32(in[0]) | uint32(in[1])<<8
	x2 := uint32(in[2]) | uint32(in[3])<<8
	x3 := uint32(in[4]) | uint32(in[5])<<8
	x4 := uint32(in[6]) | uint32(in[7])<<8
	z := key.Z[:]
	next := func() uint32 { k := uint32(z[0]); z = z[1:]; return k }
	for range 8 {
		x1 = ideaMul(x1, next())
		x2 = (x2 + next()) & 0xffff
		x3 = (x3 + next()) & 0xffff
		x4 = ideaMul(x4, next())
		t2 := ideaMul(x1^x3, next())
		t1 := ideaMul((t2+(x2^x4))&0xffff, next())
		t2 = (t1 + t2) & 0xffff
		x1 ^= t1
		x4 ^= t2
		t2 ^= x2
		x2 = x3 ^ t1
		x3 = t2
	}
	x1 = ideaMul(x1, next())
	x3 = (x3 + next()) & 0xffff
	x2 = (x2 + next()) & 0xffff
	x4 = ideaMul(x4, next())
	for i, x := range [4]uint32{x1, x3, x2, x4} {
		out[2*i], out[2*i+1] = uint8(x), uint8(x>>8)
	}
}

// ideaEncryptKey expands a 128-bit user key into the encryption schedule
// (JGF's calcEncryptKey).
func ideaEncryptKey(user [8]uint16) IdeaKey {
	var k IdeaKey
	z := k.Z[:]
	for i := range 8 {
		z[i] = int32(user[i])
	}
	for i := 8; i < 52; i++ {
		switch j := i % 8; {
		case j < 6:
			z[i] = (z[i-7]>>9 | z[i-6]<<7) & 0xffff
		case j == 6:
			z[i] = (z[i-7]>>9 | z[i-14]<<7) & 0xffff
		default:
			z[i] = (z[i-15]>>9 | z[i-14]<<7) & 0xffff
		}
	}
	return k
}

// ideaInv returns the multiplicative inverse of x modulo 2^16+1 (JGF's
// inv), 0 standing for 2^16.
func ideaInv(x int32) int32 {
	if x <= 1 {
		return x
	}
	t1, y := 0x10001/x, 0x10001%x
	if y == 1 {
		return (1 - t1) & 0xffff
	}
	t0 := int32(1)
	for {
		q := x / y
		x %= y
		t0 += q * t1
		if x == 1 {
			return t0
		}
		q = y / x
		y %= x
		t1 += q * t0
		if y == 1 {
			return (1 - t1) & 0xffff
		}
	}
}

// ideaDecryptKey inverts an encryption schedule (JGF's calcDecryptKey).
func ideaDecryptKey(enc IdeaKey) IdeaKey {
	var dk IdeaKey
	z, d := enc.Z[:], dk.Z[:]
	k, j := 0, 51
	take := func() int32 { v := z[k]; k++; return v }
	put := func(v int32) { d[j] = v; j-- }
	neg := func(v int32) int32 { return -v & 0xffff }
	t1, t2, t3 := ideaInv(take()), neg(take()), neg(take())
	put(ideaInv(take()))
	put(t3)
	put(t2)
	put(t1)
	for range 7 {
		t1 = take()
		put(take())
		put(t1)
		t1, t2, t3 = ideaInv(take()), neg(take()), neg(take())
		put(ideaInv(take()))
		put(t2)
		put(t3)
		put(t1)
	}
	t1 = take()
	put(take())
	put(t1)
	t1, t2, t3 = ideaInv(take()), neg(take()), neg(take())
	put(ideaInv(take()))
	put(t3)
	put(t2)
	put(t1)
	return dk
}
