// The report_data values Sigil asks the guest agent to bind (DESIGN.md section 6), written once so
// that every quote the service obtains is domain-separated: no caller can make the TEE vouch for a
// value that means something else (a nonce quote can never pass as the evidence set's quote).
#pragma once

#include <cstddef>
#include <string_view>

#include "common/bytes.h"

namespace sigil::evidence {

// The label that opens every nonce quote's preimage; the verifier (clients/js/src/verify) uses
// the same bytes.
constexpr std::string_view NONCE_REPORT_DATA_LABEL = "sigil/attestation-nonce/v1";
// The longest nonce a caller may give (hex of 1..64 bytes on the wire).
constexpr std::size_t MAX_NONCE_BYTES = 64;

// report_data of a quote bound to a caller's nonce: SHA-512(NONCE_REPORT_DATA_LABEL || nonce),
// 64 bytes. A SHA-512 output never ends in 32 zero bytes in practice, so it never equals an
// EvidenceReportData value; and the label keeps it apart from any other SHA-512 use.
// `nonce` is any byte string (the caller checks its length). Never fails.
common::Bytes NonceReportData(common::ByteView nonce);

// report_data of the evidence set's quote (the spec's rule 5): SHA-256 of the bytes of
// sha256sum.txt, followed by 32 zero bytes. Never fails.
common::Bytes EvidenceReportData(std::string_view sha256sum_text);

}  // namespace sigil::evidence
