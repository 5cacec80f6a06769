package cuda

import "testing"

func TestReqntid(t *testing.T) {
	ptx := []byte(`
.visible .entry plain(
	.param .u64 plain_param_0
)
{
	ret;
}
.visible .entry fixed(
	.param .u64 fixed_param_0
)
.reqntid 16, 4, 1
{
	ret;
}
.visible .entry oneD(
	.param .u64 oneD_param_0
)
.maxntid 64, 1, 1
.reqntid 32
{
	ret;
}`)
	for _, c := range []struct {
		name string
		want [3]int
	}{{"plain", [3]int{}}, {"fixed", [3]int{16, 4, 1}}, {"oneD", [3]int{32, 1, 1}}, {"missing", [3]int{}}} {
		if got := reqntid(ptx, c.name); got != c.want {
			t.Errorf("reqntid(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}
