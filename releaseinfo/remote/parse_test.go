package remote_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/openshift/hypershift-ecr/releaseinfo/remote"
	"github.com/openshift/hypershift-ecr/testing/releasepayload"
)

const tinyStream = `{"stream":"rhcos-4.10","architectures":{"x86_64":{}}}`

// configMapJSON is the boot images ConfigMap written as JSON rather than YAML.
func configMapJSON(t testing.TB, data map[string]string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data})
	require.NoError(t, err)
	return b
}

func TestParseBootImages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		data        []byte
		wantStream  string // "" for no data.stream
		wantStreams map[string]string
		wantErr     bool
	}{
		{
			name:       "When the payload is 4.10, it should read data.stream and no OS streams",
			data:       releasepayload.BootImagesYAML(releasepayload.Fixture4_10),
			wantStream: "rhcos-4.10",
		},
		{
			name:        "When the payload is 5.0, it should read data.stream and every data.streams entry",
			data:        releasepayload.BootImagesYAML(releasepayload.Fixture5_0),
			wantStream:  "rhcos-4.21",
			wantStreams: map[string]string{"rhel-9": "rhcos-4.21", "rhel-10": "rhcos-4.22"},
		},
		{
			name:       "When the ConfigMap is JSON, it should read it as JSON",
			data:       configMapJSON(t, map[string]string{"stream": tinyStream}),
			wantStream: "rhcos-4.10",
		},
		{
			name:        "When only data.streams is present, it should return the OS streams and no legacy stream",
			data:        configMapJSON(t, map[string]string{"streams": `{"rhel-10":` + tinyStream + `}`}),
			wantStreams: map[string]string{"rhel-10": "rhcos-4.10"},
		},
		{
			name:       "When data.streams is an empty object, it should report no OS streams",
			data:       configMapJSON(t, map[string]string{"stream": tinyStream, "streams": `{}`}),
			wantStream: "rhcos-4.10",
		},
		{
			name:       "When the file holds several YAML documents, it should read the first, as HyperShift",
			data:       []byte("data:\n  stream: '" + tinyStream + "'\n---\ndata:\n  stream: nope\n"),
			wantStream: "rhcos-4.10",
		},
		{name: "When there is neither data.stream nor data.streams, it should fail", data: configMapJSON(t, map[string]string{"releaseVersion": "4.10.3"}), wantErr: true},
		{name: "When data.streams is empty and data.stream missing, it should fail", data: configMapJSON(t, map[string]string{"streams": `{}`}), wantErr: true},
		{name: "When data.stream is not JSON, it should fail", data: configMapJSON(t, map[string]string{"stream": "rhcos"}), wantErr: true},
		{name: "When a data.streams entry is null, it should fail", data: configMapJSON(t, map[string]string{"stream": tinyStream, "streams": `{"rhel-10":null}`}), wantErr: true},
		{name: "When data.streams is not an object, it should fail", data: configMapJSON(t, map[string]string{"stream": tinyStream, "streams": `[]`}), wantErr: true},
		{name: "When data is not a map of strings, it should fail", data: []byte("data:\n  stream:\n    nested: map\n"), wantErr: true},
		{name: "When the file is not YAML, it should fail", data: []byte("data: [unclosed"), wantErr: true},
		{name: "When the file is empty, it should fail", data: nil, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, streams, err := remote.ParseBootImages(tc.data)
			if tc.wantErr {
				require.ErrorIs(t, err, remote.ErrInvalidReleaseMetadata)
				require.Nil(t, st)
				require.Nil(t, streams)
				return
			}
			require.NoError(t, err)
			if tc.wantStream == "" {
				require.Nil(t, st)
			} else {
				require.NotNil(t, st)
				require.Equal(t, tc.wantStream, st.Stream)
			}
			if tc.wantStreams == nil {
				require.Nil(t, streams)
				return
			}
			got := map[string]string{}
			for k, s := range streams {
				got[k] = s.Stream
			}
			require.Equal(t, tc.wantStreams, got)
		})
	}
}

func TestParseImageReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		data     []byte
		wantTags int
		wantErr  bool
	}{
		{name: "When the file is the 4.10 image-references, it should decode every tag", data: releasepayload.ImageReferencesJSON(releasepayload.Fixture4_10), wantTags: len(releasepayload.ImageReferences(releasepayload.Fixture4_10).Spec.Tags)},
		{name: "When the file is the 4.8 image-references, it should decode every tag", data: releasepayload.ImageReferencesJSON(releasepayload.Fixture4_8), wantTags: len(releasepayload.ImageReferences(releasepayload.Fixture4_8).Spec.Tags)},
		{name: "When the file is not JSON, it should fail with ErrInvalidReleaseMetadata", data: []byte("kind: ImageStream"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is, err := remote.ParseImageReferences(tc.data)
			if tc.wantErr {
				require.ErrorIs(t, err, remote.ErrInvalidReleaseMetadata)
				return
			}
			require.NoError(t, err)
			require.Len(t, is.Spec.Tags, tc.wantTags)
			require.Greater(t, tc.wantTags, 100)
		})
	}
}

// FuzzParseBootImages: the parser reads files from images anyone may publish; it must never
// panic, and must return either an error matching ErrInvalidReleaseMetadata or usable streams.
func FuzzParseBootImages(f *testing.F) {
	// Small seeds shaped like the fixtures: the fuzzer minimises every new input it finds, and
	// minimising mutations of a 40 KiB fixture stalls a short run. The fixtures themselves are
	// covered by TestParseBootImages.
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  releaseVersion: 4.10.3\n  stream: |\n    " + tinyStream + "\n"))
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\ndata:\n  stream: |-\n    " + tinyStream + "\n  streams: |-\n    {\"rhel-9\": " + tinyStream + ", \"rhel-10\": " + tinyStream + "}\n"))
	f.Add(configMapJSON(f, map[string]string{"stream": tinyStream, "streams": `{"rhel-10":` + tinyStream + `}`}))
	f.Add([]byte("data:\n  streams: '{\"a\":null}'\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, streams, err := remote.ParseBootImages(data)
		if err != nil {
			require.ErrorIs(t, err, remote.ErrInvalidReleaseMetadata)
			return
		}
		require.True(t, st != nil || len(streams) > 0, "success means at least one stream")
		for name, s := range streams {
			require.NotNil(t, s, name)
		}
	})
}
