package remote

// Test seams: compiled into this package's tests only.

// WithLimits lowers MaxFileSize and MaxScanSize so that tests can reach them
// without building gigabyte images.
func WithLimits(maxFile, maxScan int64) Option {
	return func(o *options) error {
		o.maxFile, o.maxScan = maxFile, maxScan
		return nil
	}
}

// ParseBootImages exposes the boot images ConfigMap parser to the fuzz target.
var ParseBootImages = parseBootImages

// ParseImageReferences exposes the image-references parser.
var ParseImageReferences = parseImageReferences
