# SPDX-License-Identifier: Apache-2.0
"""A Query/Retrieve SCP as a strict archive may be: an instance-level C-FIND that names keys it does not support
(where each instance lies: Image Position and Orientation, Frame of Reference, Slice Thickness) is refused with
0xA900, as PS3.4 allows; asked without them, three instances of the series are answered.

    strict_find_scp.py PORT

Prints "listening", then one line per C-FIND: "refused" or "answered N".
"""
import sys

from pydicom.dataset import Dataset
from pynetdicom import AE, evt
from pynetdicom.sop_class import StudyRootQueryRetrieveInformationModelFind

PLACES = ("ImagePositionPatient", "ImageOrientationPatient", "FrameOfReferenceUID", "SliceThickness")


def handle_find(event):
    identifier = event.identifier
    if identifier.QueryRetrieveLevel == "IMAGE" and any(k in identifier for k in PLACES):
        print("refused", flush=True)
        yield 0xA900, None
        return
    print("answered 3", flush=True)
    for n in range(1, 4):
        ds = Dataset()
        ds.QueryRetrieveLevel = identifier.QueryRetrieveLevel
        ds.StudyInstanceUID = identifier.StudyInstanceUID
        ds.SeriesInstanceUID = identifier.get("SeriesInstanceUID", "1.2.826.0.1.3680043.10.511.2")
        ds.SOPInstanceUID = f"1.2.826.0.1.3680043.10.511.3.{n}"
        ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.2"
        ds.InstanceNumber = n
        yield 0xFF00, ds


def main():
    ae = AE(ae_title="STRICT")
    ae.add_supported_context(StudyRootQueryRetrieveInformationModelFind)
    print("listening", flush=True)
    ae.start_server(("127.0.0.1", int(sys.argv[1])), evt_handlers=[(evt.EVT_C_FIND, handle_find)])


if __name__ == "__main__":
    main()
