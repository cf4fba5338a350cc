// sigil-evidence: writes the evidence set nginx serves at /evidences/ (DESIGN.md section 6):
// cert-<domain>.pem, acme-account.json, sha256sum.txt over those two, and quote.json, the guest
// agent's quote for report_data = SHA-256(sha256sum.txt). Run at start and after every certificate
// change; each run replaces the whole set at once.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "evidence/agent/agent_client.h"
#include "evidence/agent/report_data.h"
#include "evidence/evidence_files.h"
#include "keyd/client/keyd_client.h"

using namespace sigil;

namespace {

constexpr int EXIT_USAGE = 64;
constexpr int EXIT_UNAVAILABLE = 69;

constexpr std::string_view USAGE =
    "usage: sigil-evidence --dir DIR --cert PEM_FILE --domain NAME --acme-account-uri URI --agent-socket PATH\n"
    "                      [--keyd-socket PATH] [--timeout-ms N (default 10000)]\n"
    "  DIR becomes a symlink to the current set (nginx serves it at /evidences/).\n"
    "  --keyd-socket adds receipt-key.json, the receipt key's address asked of sigil-keyd (docs/receipts.md).\n";

struct Options {
    std::string dir, cert, domain, acme_uri, agent_socket, keyd_socket;
    int timeout_ms = 10000;
};

bool Parse(int argc, char** argv, Options* o) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view flag = argv[i];
        if (i + 1 >= argc) return false;
        const std::string value = argv[++i];
        if (flag == "--dir") o->dir = value;
        else if (flag == "--cert") o->cert = value;
        else if (flag == "--domain") o->domain = value;
        else if (flag == "--acme-account-uri") o->acme_uri = value;
        else if (flag == "--agent-socket") o->agent_socket = value;
        else if (flag == "--keyd-socket") o->keyd_socket = value;
        else if (flag == "--timeout-ms") {
            try {
                o->timeout_ms = std::stoi(value);
            } catch (...) {
                return false;
            }
            if (o->timeout_ms < 100 || o->timeout_ms > 600000) return false;
        } else {
            return false;
        }
    }
    return !o->dir.empty() && !o->cert.empty() && !o->domain.empty() && !o->agent_socket.empty();
}

int Fail(int code, const common::Error& e) {
    common::LogError("sigil-evidence: " + e.code + ": " + e.message);
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    if (!Parse(argc, argv, &o)) {
        std::fputs(USAGE.data(), stderr);
        return EXIT_USAGE;
    }
    std::ifstream in(o.cert, std::ios::binary);
    if (!in) {
        common::LogError("sigil-evidence: cannot read the certificate " + o.cert);
        return EXIT_USAGE;
    }
    const std::string cert((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto files = evidence::CoveredFiles(o.domain, cert, o.acme_uri);
    if (!files.ok()) return Fail(EXIT_USAGE, files.error());
    // The receipt key's address is covered by sha256sum.txt like the certificate, so a receipt is
    // checked against a key the quote attests (keyd derives it; the address is public).
    if (!o.keyd_socket.empty()) {
        workers::KeydClientOptions keyd_options;
        keyd_options.socket_path = o.keyd_socket;
        keyd_options.request_timeout = std::chrono::milliseconds(o.timeout_ms);
        workers::KeydClient keyd(keyd_options);
        auto receipt_key = keyd.GetReceiptPublic();
        if (!receipt_key.ok()) return Fail(EXIT_UNAVAILABLE, receipt_key.error());
        files->push_back(evidence::ReceiptKeyFile(receipt_key->address, receipt_key->public_key));
    }

    const std::string sums = evidence::Sha256SumText(*files);
    evidence::AgentClient agent({o.agent_socket, o.timeout_ms});
    auto quote = agent.GetQuote(evidence::EvidenceReportData(sums));
    if (!quote.ok()) return Fail(EXIT_UNAVAILABLE, quote.error());

    files->push_back({"sha256sum.txt", sums});
    files->push_back({"quote.json", *quote + "\n"});
    if (auto st = evidence::PublishEvidenceSet(o.dir, *files); !st.ok()) return Fail(1, st.error());
    common::LogInfo("sigil-evidence: published " + std::to_string(files->size()) + " files in " + o.dir);
    return 0;
}
