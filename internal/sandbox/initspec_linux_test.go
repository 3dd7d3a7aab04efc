//go:build linux

package sandbox

import (
	"reflect"
	"strconv"
	"testing"
)

// fillAll sets every field reachable from v (structs, slices of two
// items, strings, flags, numbers) to a value of its own, none zero.
func fillAll(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			fillAll(v.Field(i), n)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fillAll(v.Index(i), n)
		}
	case reflect.String:
		// lengths past one byte of uvarint, and every byte value
		s := "v" + strconv.Itoa(*n) + "\x00\n\xff"
		for range *n % 3 * 70 {
			s += "x"
		}
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(*n))
	default:
		panic("initSpec has a field of kind " + v.Kind().String() + ": encode it in initspec_linux.go")
	}
}

// TestInitSpecRoundTrip: every field of the init's spec arrives as it was
// sent. A field added to initSpec, Profile or Path and not to the encoding
// fails here.
func TestInitSpecRoundTrip(t *testing.T) {
	var want initSpec
	n := 0
	fillAll(reflect.ValueOf(&want).Elem(), &n)
	got, err := decodeInitSpec(want.encode())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
	}
	// each flag on its own, so that none is read in another's place
	for _, f := range []*bool{&want.Profile.NoUnixSockets, &want.Profile.NetworkOff, &want.Profile.Registries, &want.Probe, &want.Profile.Protected[1].Dir} {
		*f = false
		got, err := decodeInitSpec(want.encode())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("round trip with a flag off: %v\n got %#v\nwant %#v", err, got, want)
		}
		*f = true
	}
	var zero initSpec
	if got, err := decodeInitSpec(zero.encode()); err != nil || !reflect.DeepEqual(got, zero) {
		t.Errorf("round trip of the zero spec: %v %#v", err, got)
	}
}

// TestInitSpecMalformed: a spec cut short, or with bytes after it, is
// refused, never read as a shorter profile.
func TestInitSpecMalformed(t *testing.T) {
	var s initSpec
	n := 0
	fillAll(reflect.ValueOf(&s).Elem(), &n)
	b := s.encode()
	for i := range len(b) {
		if _, err := decodeInitSpec(b[:i]); err == nil {
			t.Fatalf("a spec cut to %d of %d bytes was accepted", i, len(b))
		}
	}
	if _, err := decodeInitSpec(append(b, 0)); err == nil {
		t.Error("a spec with a trailing byte was accepted")
	}
	var fault specWriter
	fault.str(s.Fault)
	fault.strs(s.Listen)
	bad := append([]byte{}, b...)
	probe := len(bad) - len(fault.b) - 1
	if bad[probe] != 1 {
		t.Fatalf("byte %d is not Probe's flag", probe)
	}
	bad[probe] = 2
	if _, err := decodeInitSpec(bad); err == nil {
		t.Error("a flag of 2 was accepted")
	}
	if _, err := decodeInitSpec([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}); err == nil {
		t.Error("a length past the end was accepted")
	}
}
