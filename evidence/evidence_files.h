// The evidence set nginx serves at /evidences/ (DESIGN.md section 6): what goes in it, and how a
// new set replaces the served one so that a reader never sees half of each.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"
#include "common/result.h"

namespace sigil::evidence {

// One file of the set: its name in the directory and its bytes.
struct EvidenceFile {
    std::string name;
    std::string bytes;
};

// The files that sha256sum.txt covers: cert-<domain>.pem (the certificate as given, PEM) and
// acme-account.json ({"uri": acme_account_uri}).
// Errors: InvalidInput "invalid_domain" (empty, over 253 characters, or a character outside
// [A-Za-z0-9.-], or starting with a dot), "invalid_certificate" (no PEM certificate block).
common::Result<std::vector<EvidenceFile>> CoveredFiles(const std::string& domain, const std::string& cert_pem,
                                                       const std::string& acme_account_uri);

// receipt-key.json: {"address":"0x<40 hex>","public_key":"0x04<128 hex>"}, the deployment's
// receipt key (docs/receipts.md), listed in sha256sum.txt so the evidence quote covers it.
EvidenceFile ReceiptKeyFile(const common::Address20& address, common::ByteView public_key);

// sha256sum's format over `files`: "<64 hex>  <name>\n" per file, in the given order.
std::string Sha256SumText(const std::vector<EvidenceFile>& files);

// Publishes `files` as the served set at `dir`: writes them into a new folder beside `dir`
// (`.<name>.sets/<n>`), then points the symlink `dir` at it with one rename(2). The first time, a
// real directory at `dir` is moved aside (its files stay readable until the rename). Earlier sets but
// the one just replaced are removed. Errors: Internal "evidence_write_failed" naming the path.
common::Status PublishEvidenceSet(const std::string& dir, const std::vector<EvidenceFile>& files);

}  // namespace sigil::evidence
