// Moved: the dtype table, block formats and codecs are switchyard_common's
// (core/common/switchyard/common/dtype.h). This forwarder keeps branches written against the old
// header building; include the new one.
#pragma once

#include "switchyard/common/dtype.h"
