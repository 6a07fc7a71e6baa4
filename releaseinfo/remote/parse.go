package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/coreos/stream-metadata-go/stream"
	imagev1 "github.com/openshift/api/image/v1"
	"go.yaml.in/yaml/v2"
)

// parseImageReferences decodes release-manifests/image-references, an
// image.openshift.io/v1 ImageStream in JSON, as HyperShift does. Errors match
// ErrInvalidReleaseMetadata and, unlike HyperShift's, do not append the input.
func parseImageReferences(data []byte) (*imagev1.ImageStream, error) {
	var is imagev1.ImageStream
	if err := json.Unmarshal(data, &is); err != nil {
		return nil, fmt.Errorf("%w: not an ImageStream: %v", ErrInvalidReleaseMetadata, err)
	}
	return &is, nil
}

// bootImagesConfigMap is the part of the coreos-bootimages ConfigMap the
// reader needs. Decoding into it rather than into corev1.ConfigMap keeps
// k8s.io/api out of the parser without changing what is accepted for data.
type bootImagesConfigMap struct {
	Data map[string]string `json:"data" yaml:"data"`
}

// parseBootImages decodes
// release-manifests/0000_50_installer_coreos-bootimages.yaml, a ConfigMap in
// YAML (or JSON) whose data.stream holds the CoreOS stream JSON and, from
// OpenShift 5.0, data.streams a JSON object of OS stream name -> stream.
//
// It follows HyperShift's DeserializeImageMetadata: data.stream is optional
// when data.streams has at least one stream (the legacy key is frozen to
// rhel-9 and will eventually go), and there is no fallback from one key to
// the other. Unlike HyperShift it also refuses a null entry in data.streams,
// which a consumer would dereference, and its errors do not append the input.
func parseBootImages(data []byte) (*stream.Stream, map[string]*stream.Stream, error) {
	var cm bootImagesConfigMap
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		// What k8s.io/apimachinery's YAMLOrJSONDecoder does: JSON is read as JSON.
		if err := json.Unmarshal(data, &cm); err != nil {
			return nil, nil, fmt.Errorf("%w: not a ConfigMap: %v", ErrInvalidReleaseMetadata, err)
		}
	} else if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&cm); err != nil {
		// The first YAML document only, as HyperShift's decoder.
		if errors.Is(err, io.EOF) {
			err = errors.New("empty document")
		}
		return nil, nil, fmt.Errorf("%w: not a ConfigMap: %v", ErrInvalidReleaseMetadata, err)
	}

	var streams map[string]*stream.Stream
	if raw, ok := cm.Data["streams"]; ok {
		if err := json.Unmarshal([]byte(raw), &streams); err != nil {
			return nil, nil, fmt.Errorf("%w: data.streams is not a map of CoreOS streams: %v", ErrInvalidReleaseMetadata, err)
		}
		for name, s := range streams {
			if s == nil {
				return nil, nil, fmt.Errorf("%w: data.streams[%q] is null", ErrInvalidReleaseMetadata, name)
			}
		}
		if len(streams) == 0 {
			streams = nil
		}
	}

	raw, ok := cm.Data["stream"]
	if !ok {
		if streams == nil {
			return nil, nil, fmt.Errorf("%w: ConfigMap has neither data.stream nor data.streams", ErrInvalidReleaseMetadata)
		}
		return nil, streams, nil
	}
	var s stream.Stream
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return nil, nil, fmt.Errorf("%w: data.stream is not a CoreOS stream: %v", ErrInvalidReleaseMetadata, err)
	}
	return &s, streams, nil
}
