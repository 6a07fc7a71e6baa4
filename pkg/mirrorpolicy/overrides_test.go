package mirrorpolicy

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseOverrides(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      map[string][]string
		wantErr   bool
		wantPair  string
		wantIndex int
	}{
		{name: "When the value is empty, it should return nil", in: ""},
		{name: "When the value is HyperShift's empty marker \"=\", it should return nil", in: "="},
		{
			name: "When a source repeats, it should append its mirrors in order",
			in:   release + "=" + ecrRepo + "," + artDev + "=" + ecrRepo + "," + release + "=mirror.example.com/ocp-release",
			want: map[string][]string{
				release: {ecrRepo, "mirror.example.com/ocp-release"},
				artDev:  {ecrRepo},
			},
		},
		{
			name: "When a source is a wildcard, it should be accepted",
			in:   "*.redhat.io=mirror.local/redhat",
			want: map[string][]string{"*.redhat.io": {"mirror.local/redhat"}},
		},
		{name: "When a pair has no \"=\", it should quote it", in: release + "=" + ecrRepo + ",quay.io", wantErr: true, wantPair: "quay.io", wantIndex: 1},
		{name: "When a pair has two \"=\", it should quote it", in: "quay.io=a.example.com=b", wantErr: true, wantPair: "quay.io=a.example.com=b"},
		{name: "When a pair has an empty mirror, it should quote it", in: "quay.io=", wantErr: true, wantPair: "quay.io="},
		{name: "When a pair has an empty source, it should quote it", in: "=mirror.local", wantErr: true, wantPair: "=mirror.local"},
		{name: "When there is a trailing comma, it should report the empty pair", in: "quay.io=mirror.local,", wantErr: true, wantPair: "", wantIndex: 1},
		{name: "When a mirror has a tag, it should quote the pair", in: "quay.io=mirror.local/q:1", wantErr: true, wantPair: "quay.io=mirror.local/q:1"},
		{name: "When a pair has spaces, it should quote it", in: "quay.io= mirror.local", wantErr: true, wantPair: "quay.io= mirror.local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOverrides(tt.in)
			if tt.wantErr {
				var oe *OverrideError
				require.ErrorAs(t, err, &oe)
				require.Equal(t, tt.wantPair, oe.Pair)
				require.Equal(t, tt.wantIndex, oe.Index)
				require.Contains(t, err.Error(), `"`+tt.wantPair+`"`)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFormatOverrides(t *testing.T) {
	tests := []struct {
		name string
		in   map[string][]string
		want string
	}{
		{name: "When the map is empty, it should return an empty string", in: nil, want: ""},
		{
			name: "When the map has several sources, it should sort sources and keep mirror order",
			in: map[string][]string{
				release:   {"z.example.com/r", "a.example.com/r"},
				"quay.io": {ecrHost + "/quay"},
				artDev:    nil,
			},
			want: "quay.io=" + ecrHost + "/quay," + release + "=z.example.com/r," + release + "=a.example.com/r",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FormatOverrides(tt.in)
			require.Equal(t, tt.want, got)
			back, err := ParseOverrides(got)
			require.NoError(t, err)
			for k, v := range tt.in {
				if len(v) == 0 {
					continue
				}
				require.Equal(t, v, back[k])
			}
		})
	}
}
