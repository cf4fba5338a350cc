// Helpers shared by the unit suites: test-data paths and file loading.
#pragma once

#include <fstream>
#include <functional>
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

// The known-answer loop of the vector files: calls check(line) for every line that is neither
// empty nor a '#' comment and returns how many there were (suites assert the count, so a
// truncated file cannot pass with fewer vectors).
inline int ForEachVectorLine(const std::string& name, const std::function<void(const std::string&)>& check) {
    std::istringstream in(ReadDataFile(name));
    std::string line;
    int lines = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        check(line);
        ++lines;
    }
    return lines;
}

// Path of a binary built by this tree, e.g. BinaryPath("keyd/sigil-keyd").
inline std::string BinaryPath(const std::string& relative) { return std::string(SIGIL_BINARY_DIR) + "/" + relative; }

}  // namespace sigil::test
