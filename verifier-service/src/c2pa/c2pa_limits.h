#pragma once

// Every size, count and depth a stranger's file controls on the C2PA path, in one place. The
// defaults are generous for real camera and editor manifests (a few KiB to a few hundred KiB, a
// handful of assertions) and small enough that a hostile file costs bounded memory and time.

#include <cstddef>

namespace portcullis::verifier::c2pa {

struct C2paLimits {
  // The whole asset handed to the validator (JPEG or PNG bytes).
  size_t max_asset_bytes = 32 * 1024 * 1024;
  // The reassembled JUMBF manifest store.
  size_t max_manifest_store_bytes = 4 * 1024 * 1024;
  // JPEG APP11 segments carrying one manifest store, and JPEG segments walked before the scan.
  size_t max_app11_segments = 1024;
  size_t max_jpeg_segments = 4096;
  // PNG chunks walked.
  size_t max_png_chunks = 4096;
  // JUMBF: boxes in the whole tree, superbox nesting, label length.
  size_t max_jumbf_boxes = 2048;
  size_t max_jumbf_depth = 8;
  size_t max_label_bytes = 256;
  // Manifests in a store; assertions referenced by one claim.
  size_t max_manifests = 64;
  size_t max_assertions = 256;
  // CBOR: nesting depth and items in one decoded value.
  size_t max_cbor_depth = 16;
  size_t max_cbor_items = 65536;
  // COSE x5chain certificates; hash-binding exclusion ranges; actions in c2pa.actions.
  size_t max_chain_certificates = 8;
  // RFC 3161 time-stamps read from one signature.
  size_t max_timestamps = 4;
  size_t max_exclusions = 64;
  size_t max_actions = 256;
};

}  // namespace portcullis::verifier::c2pa
