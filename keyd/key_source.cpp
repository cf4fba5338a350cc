#include "keyd/key_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/handles.h"
#include "common/log.h"
#include "common/key_derivation.h"
#include "common/random.h"

namespace sigil::keyd {
namespace {

using common::ErrorKind;
using common::MakeError;

common::Error Unreadable(const std::string& path, std::string_view what, int err) {
    return MakeError(ErrorKind::Internal, "root_key_unreadable",
                     std::string(what) + " " + path + ": " + std::strerror(err));
}

bool WriteAll(int fd, const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

}  // namespace

common::Status FileKeySource::CreateIfMissing() const {
    common::UniqueFd fd(::open(m_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) {
        if (errno == EEXIST) return common::Success();  // another keyd won the race; read theirs
        return Unreadable(m_path, "cannot create", errno);
    }
    // The umask can only clear bits, but be exact about what we promise.
    if (::fchmod(fd.get(), 0600) != 0) return Unreadable(m_path, "cannot chmod", errno);
    const common::SecretBytes key = common::RandomSecret(common::ROOT_KEY_SIZE);
    if (!WriteAll(fd.get(), key.data(), key.size()) || ::fsync(fd.get()) != 0) {
        const int err = errno;
        ::unlink(m_path.c_str());  // never leave a short key behind
        return Unreadable(m_path, "cannot write", err);
    }
    common::LogInfo("created a new root key file " + m_path);
    return common::Success();
}

common::Result<common::SecretBytes> FileKeySource::LoadRootKey() {
    common::UniqueFd fd(::open(m_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid() && errno == ENOENT) {
        SIGIL_TRY_STATUS(CreateIfMissing());
        fd.Reset(::open(m_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!fd.valid()) {
        if (errno == ELOOP) {
            return MakeError(ErrorKind::Internal, "root_key_not_regular", m_path + " is a symbolic link");
        }
        return Unreadable(m_path, "cannot open", errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return Unreadable(m_path, "cannot stat", errno);
    if (!S_ISREG(st.st_mode)) {
        return MakeError(ErrorKind::Internal, "root_key_not_regular", m_path + " is not a regular file");
    }
    if ((st.st_mode & 077) != 0 || st.st_uid != ::geteuid()) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        return MakeError(ErrorKind::Internal, "root_key_insecure_mode",
                         m_path + " has mode " + mode + " owner uid " + std::to_string(st.st_uid) +
                             "; it must be 0600 (or stricter) and owned by keyd's user");
    }
    if (st.st_size != static_cast<off_t>(common::ROOT_KEY_SIZE)) {
        return MakeError(ErrorKind::Internal, "root_key_bad_size",
                         m_path + " holds " + std::to_string(st.st_size) + " bytes, not 32");
    }
    common::SecretBytes key(common::ROOT_KEY_SIZE);
    std::size_t got = 0;
    while (got < key.size()) {
        const ssize_t r = ::read(fd.get(), key.data() + got, key.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return Unreadable(m_path, "cannot read", errno);
        if (r == 0) return MakeError(ErrorKind::Internal, "root_key_bad_size", m_path + " shrank while reading");
        got += static_cast<std::size_t>(r);
    }
    return key;
}

}  // namespace sigil::keyd
