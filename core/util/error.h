#pragma once
// One exception hierarchy for the whole product. Messages say what went wrong, where,
// and (for shapes) what was expected versus what was found, so a user can act on them.
#include <stdexcept>
#include <string>

namespace plexus {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShapeError : public Error { public: using Error::Error; };     // incompatible shapes
class ValueError : public Error { public: using Error::Error; };     // bad argument value
class IndexError : public Error { public: using Error::Error; };     // index out of range
class AutogradError : public Error { public: using Error::Error; };  // misuse of backward()
class DeviceError : public Error { public: using Error::Error; };    // unsupported device / CUDA
class IoError : public Error { public: using Error::Error; };        // file I/O or malformed file content
class DataError : public IoError { public: using IoError::IoError; };  // malformed dataset file (IDX, CSV)
class ProjectError : public IoError { public: using IoError::IoError; };  // malformed project file (.plexus)

}  // namespace plexus
