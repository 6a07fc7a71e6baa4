package ggcrprobe

// Classify exposes the error mapping to tests of registry answers that a
// HEAD cannot produce (diagnostic codes need a body).
var Classify = classify
