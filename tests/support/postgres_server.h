// A throw-away PostgreSQL server for tests and benchmarks: initdb into a temporary folder, postgres
// on a free loopback port (as the `postgres` system user when running as root, since the server
// refuses root), stopped and removed on destruction. Debian: package postgresql (scripts/setup).
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sigil::test {

// The folder holding initdb and postgres: $SIGIL_POSTGRES_BINDIR, else the newest
// /usr/lib/postgresql/<version>/bin. Throws with what to install when there is none.
inline std::string PostgresBinDir() {
    namespace fs = std::filesystem;
    auto usable = [](const fs::path& dir) {
        return ::access((dir / "postgres").c_str(), X_OK) == 0 && ::access((dir / "initdb").c_str(), X_OK) == 0;
    };
    if (const char* env = std::getenv("SIGIL_POSTGRES_BINDIR"); env != nullptr && *env != '\0') {
        if (usable(env)) return env;
        throw std::runtime_error(std::string("SIGIL_POSTGRES_BINDIR=") + env + " holds no postgres and initdb");
    }
    std::vector<std::pair<int, fs::path>> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && usable(entry.path() / "bin")) {
            found.emplace_back(std::stoi(name), entry.path() / "bin");
        }
    }
    if (found.empty()) {
        throw std::runtime_error(
            "PostgreSQL server binaries (initdb, postgres) not found under /usr/lib/postgresql/*/bin: "
            "run scripts/setup (Debian package postgresql) or set SIGIL_POSTGRES_BINDIR");
    }
    std::sort(found.begin(), found.end());
    return found.back().second.string();
}

inline int FreeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
        if (fd >= 0) ::close(fd);
        throw std::runtime_error("no free loopback port");
    }
    ::close(fd);
    return ntohs(a.sin_port);
}

class PostgresServer {
public:
    // `settings` are extra `-c name=value` server settings (tests pass fsync=off).
    explicit PostgresServer(std::vector<std::string> settings = {})
        : m_bin(PostgresBinDir()), m_settings(std::move(settings)), m_owner(::getpid()) {
        ResolveUser();
        char tmpl[] = "/tmp/sigil-pg-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
        m_dir = tmpl;
        if (m_as_other_user && ::chown(m_dir.c_str(), m_uid, m_gid) != 0) {
            Remove();
            throw std::runtime_error("cannot hand " + m_dir + " to the postgres user");
        }
        m_port = FreeLoopbackPort();
        try {
            const int rc = RunAndWait({m_bin + "/initdb", "-D", m_dir + "/data", "-A", "trust", "-U", "postgres", "-E",
                                       "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
                                      m_dir + "/initdb.log");
            if (rc != 0) throw std::runtime_error("initdb failed (exit " + std::to_string(rc) + "): " + Tail("initdb.log"));
            Start();
        } catch (...) {
            Stop();
            Remove();
            throw;
        }
    }
    ~PostgresServer() {
        if (::getpid() != m_owner) return;  // a fork()ed child must not stop the parent's server
        Stop();
        Remove();
    }
    PostgresServer(const PostgresServer&) = delete;
    PostgresServer& operator=(const PostgresServer&) = delete;

    int Port() const { return m_port; }
    pid_t Pid() const { return m_pid; }
    bool Running() const { return m_pid > 0; }
    std::string Url(const std::string& database = "postgres") const {
        return "postgresql://postgres@127.0.0.1:" + std::to_string(m_port) + "/" + database;
    }

    // Starts the server (again after Stop, same data and port) and waits until it accepts connections.
    void Start() {
        if (m_pid > 0) return;
        std::vector<std::string> args{m_bin + "/postgres", "-D", m_dir + "/data", "-p", std::to_string(m_port), "-k",
                                      m_dir, "-c", "listen_addresses=127.0.0.1"};
        for (const auto& s : m_settings) {
            args.push_back("-c");
            args.push_back(s);
        }
        m_pid = Spawn(args, m_dir + "/postgres.log");
        const std::string ping = "host=127.0.0.1 port=" + std::to_string(m_port) + " user=postgres dbname=postgres connect_timeout=2";
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (PQping(ping.c_str()) != PQPING_OK) {
            int status = 0;
            if (::waitpid(m_pid, &status, WNOHANG) == m_pid) {
                m_pid = -1;
                throw std::runtime_error("postgres exited at start: " + Tail("postgres.log"));
            }
            if (std::chrono::steady_clock::now() > deadline) {
                Stop();
                throw std::runtime_error("postgres did not accept connections within 60 s: " + Tail("postgres.log"));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    // Fast shutdown (SIGINT: sessions are ended, the server exits), then immediate, then SIGKILL.
    void Stop() {
        if (m_pid <= 0) return;
        for (int sig : {SIGINT, SIGQUIT, SIGKILL}) {
            ::kill(m_pid, sig);
            for (int i = 0; i < 1000; ++i) {
                if (::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
                    m_pid = -1;
                    return;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
    }

    // A new, empty database; answers its URL.
    std::string CreateDatabase() {
        const std::string name = "sigil_" + std::to_string(++m_databases);
        Sql("CREATE DATABASE " + name);
        return Url(name);
    }

    // Runs one statement on the postgres database (test administration only; no parameters).
    void Sql(const std::string& statement) {
        PGconn* conn = PQconnectdb((Url() + "?connect_timeout=5").c_str());
        if (PQstatus(conn) != CONNECTION_OK) {
            const std::string why = PQerrorMessage(conn);
            PQfinish(conn);
            throw std::runtime_error("cannot connect to the test PostgreSQL: " + why);
        }
        PGresult* r = PQexec(conn, statement.c_str());
        const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
        const std::string why = PQresultErrorMessage(r);
        PQclear(r);
        PQfinish(conn);
        if (!ok) throw std::runtime_error(statement + ": " + why);
    }

    std::string Tail(const std::string& log) const {
        std::ifstream in(m_dir + "/" + log);
        std::stringstream ss;
        ss << in.rdbuf();
        std::string s = ss.str();
        return s.size() > 2000 ? s.substr(s.size() - 2000) : s;
    }

private:
    void ResolveUser() {
        if (::geteuid() != 0) return;
        const passwd* pw = ::getpwnam("postgres");
        if (pw == nullptr) {
            throw std::runtime_error(
                "running as root, and PostgreSQL refuses root: the `postgres` system user (created by the Debian "
                "package postgresql, scripts/setup) is missing");
        }
        m_as_other_user = true;
        m_uid = pw->pw_uid;
        m_gid = pw->pw_gid;
    }

    // fork + exec with stdout/stderr to `log`, as the postgres user when running as root. The child
    // gets SIGINT (fast shutdown) if this process dies, so a crashed test leaves no server behind.
    pid_t Spawn(std::vector<std::string> args, const std::string& log) const {
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (out < 0) throw std::runtime_error("cannot open " + log);
        const pid_t parent = ::getpid();
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(out);
            throw std::runtime_error("fork failed");
        }
        if (pid == 0) {
            // Only async-signal-safe calls between fork and exec.
            ::dup2(out, STDOUT_FILENO);
            ::dup2(out, STDERR_FILENO);
            const int devnull = ::open("/dev/null", O_RDONLY);
            if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
            ::setsid();
            if (m_as_other_user && (::setgroups(0, nullptr) != 0 || ::setgid(m_gid) != 0 || ::setuid(m_uid) != 0)) {
                ::_exit(126);
            }
            // After setuid: a change of credentials clears the parent-death signal.
            ::prctl(PR_SET_PDEATHSIG, SIGINT);
            if (::getppid() != parent) ::_exit(125);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out);
        return pid;
    }

    int RunAndWait(const std::vector<std::string>& args, const std::string& log) const {
        const pid_t pid = Spawn(args, log);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    void Remove() {
        std::error_code ec;
        if (!m_dir.empty()) std::filesystem::remove_all(m_dir, ec);
    }

    std::string m_bin;
    std::vector<std::string> m_settings;
    pid_t m_owner;
    bool m_as_other_user = false;
    uid_t m_uid = 0;
    gid_t m_gid = 0;
    std::string m_dir;
    int m_port = 0;
    pid_t m_pid = -1;
    int m_databases = 0;
};

}  // namespace sigil::test
