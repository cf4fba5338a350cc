// Helpers shared by the unit suites: test-data paths and file loading.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace sigil::test {

inline std::string DataPath(const std::string& name) { return std::string(SIGIL_TEST_DATA_DIR) + "/" + name; }

inline std::string ReadDataFile(const std::string& name) {
    std::ifstream in(DataPath(name), std::ios::binary);
    if (!in) throw std::runtime_error("cannot open test data " + name);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace sigil::test

namespace sigil::test {

// Path of a binary built by this tree, e.g. BinaryPath("keyd/sigil-keyd").
inline std::string BinaryPath(const std::string& relative) { return std::string(SIGIL_BINARY_DIR) + "/" + relative; }

}  // namespace sigil::test
