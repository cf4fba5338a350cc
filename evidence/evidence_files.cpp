#include "evidence/evidence_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/handles.h"
#include "common/hex.h"
#include "common/json.h"
#include "common/sha256.h"

namespace sigil::evidence {
namespace {

namespace fs = std::filesystem;
using common::ErrorKind;
using common::MakeError;

common::Error WriteFailed(const std::string& path, const std::string& why) {
    return MakeError(ErrorKind::Internal, "evidence_write_failed", path + ": " + why);
}

bool ValidDomain(const std::string& d) {
    if (d.empty() || d.size() > 253 || d[0] == '.') return false;
    for (char c : d) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
        if (!ok) return false;
    }
    return true;
}

// Writes `bytes` to `path` (new, 0644) and fsyncs it.
common::Status WriteFileSynced(const std::string& path, const std::string& bytes) {
    common::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd.valid()) return WriteFailed(path, std::strerror(errno));
    for (std::size_t off = 0; off < bytes.size();) {
        const ssize_t n = ::write(fd.get(), bytes.data() + off, bytes.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return WriteFailed(path, std::strerror(errno));
        off += static_cast<std::size_t>(n);
    }
    if (::fsync(fd.get()) != 0) return WriteFailed(path, std::strerror(errno));
    return common::Success();
}

}  // namespace

common::Result<std::vector<EvidenceFile>> CoveredFiles(const std::string& domain, const std::string& cert_pem,
                                                       const std::string& acme_account_uri) {
    if (!ValidDomain(domain)) {
        return MakeError(ErrorKind::InvalidInput, "invalid_domain", "the domain must be a host name ([A-Za-z0-9.-])");
    }
    if (cert_pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos ||
        cert_pem.find("-----END CERTIFICATE-----") == std::string::npos) {
        return MakeError(ErrorKind::InvalidInput, "invalid_certificate", "the certificate file holds no PEM certificate");
    }
    return std::vector<EvidenceFile>{
        {"cert-" + domain + ".pem", cert_pem},
        {"acme-account.json", "{\"uri\":" + common::JsonQuote(acme_account_uri) + "}\n"},
    };
}

EvidenceFile ReceiptKeyFile(const common::Address20& address, common::ByteView public_key) {
    return {"receipt-key.json", "{\"address\":" + common::JsonQuote(common::HexEncode(address, true)) +
                                    ",\"public_key\":" + common::JsonQuote(common::HexEncode(public_key, true)) +
                                    "}\n"};
}

std::string Sha256SumText(const std::vector<EvidenceFile>& files) {
    std::string out;
    for (const auto& f : files) {
        const auto digest = common::Sha256Hash(f.bytes);
        out += common::HexEncode(digest) + "  " + f.name + "\n";
    }
    return out;
}

common::Status PublishEvidenceSet(const std::string& dir, const std::vector<EvidenceFile>& files) {
    const fs::path link(dir);
    const fs::path sets = link.parent_path() / ("." + link.filename().string() + ".sets");
    std::error_code ec;
    fs::create_directories(sets, ec);
    if (ec) return WriteFailed(sets.string(), ec.message());
    ::chmod(sets.c_str(), 0755);

    // A fresh folder for this set: mkdtemp-style, so two runs never share one.
    std::string tmpl = (sets / "set-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return WriteFailed(tmpl, std::strerror(errno));
    const fs::path set(tmpl);
    ::chmod(set.c_str(), 0755);  // nginx's workers read it
    for (const auto& f : files) {
        if (auto st = WriteFileSynced((set / f.name).string(), f.bytes); !st.ok()) return st;
    }

    // The previous target, to keep (a download in flight may still read it) while older ones go.
    fs::path previous;
    if (fs::is_symlink(link, ec)) {
        previous = fs::read_symlink(link, ec);
    } else if (fs::exists(link, ec)) {
        // First run over a real directory: move it aside so the symlink can take its name.
        const fs::path aside = sets / ("legacy-" + std::to_string(::getpid()));
        if (::rename(link.c_str(), aside.c_str()) != 0) return WriteFailed(link.string(), std::strerror(errno));
        previous = aside;
    }
    const fs::path staged = link.parent_path() / ("." + link.filename().string() + ".new");
    ::unlink(staged.c_str());
    if (::symlink(set.c_str(), staged.c_str()) != 0) return WriteFailed(staged.string(), std::strerror(errno));
    if (::rename(staged.c_str(), link.c_str()) != 0) return WriteFailed(link.string(), std::strerror(errno));

    for (const auto& entry : fs::directory_iterator(sets, ec)) {
        if (entry.path() == set || entry.path() == previous) continue;
        fs::remove_all(entry.path(), ec);
    }
    return common::Success();
}

}  // namespace sigil::evidence
