# SPDX-License-Identifier: Apache-2.0
"""A PACS that queues C-MOVEs, as some do: it answers the C-MOVE at once — Success, and the number of instances it
has taken on to send — and sends them afterwards, on an association of its own, half a second later (its queue).

    queued_move_scp.py PORT FOLDER DESTINATION_AE=HOST:PORT ...

FOLDER holds the instances (*.dcm) it knows. Prints "listening", then "queued N for AE" per C-MOVE and
"sent N to AE" once they are sent.
"""
import glob
import sys
import threading
import time

from pydicom import dcmread
from pynetdicom import AE, evt, StoragePresentationContexts
from pynetdicom.sop_class import StudyRootQueryRetrieveInformationModelMove

FOLDER = sys.argv[2]
DESTINATIONS = {}
for arg in sys.argv[3:]:
    ae, where = arg.split("=", 1)
    host, port = where.rsplit(":", 1)
    DESTINATIONS[ae] = (host, int(port))


def send_later(destination, ae_title, originator, message_id, files):
    time.sleep(0.5)  # the PACS's queue: the C-MOVE was answered before anything is sent
    sender = AE(ae_title="QUEUED")
    sender.requested_contexts = StoragePresentationContexts
    assoc = sender.associate(destination[0], destination[1], ae_title=ae_title)
    sent = 0
    if assoc.is_established:
        for f in files:
            status = assoc.send_c_store(dcmread(f), originator_aet=originator, originator_id=message_id)
            if status and status.Status == 0x0000:
                sent += 1
        assoc.release()
    print(f"sent {sent} to {ae_title}", flush=True)


def handle_move(event):
    identifier = event.identifier
    ae_title = (event.move_destination or "").strip()
    if ae_title not in DESTINATIONS:
        yield None, None
        return
    files = [f for f in sorted(glob.glob(FOLDER + "/*.dcm"))
             if dcmread(f, stop_before_pixels=True).StudyInstanceUID == identifier.StudyInstanceUID]
    originator = event.assoc.requestor.ae_title
    message_id = event.request.MessageID
    dimse = event.assoc.dimse
    plain_send = dimse.send_msg

    def answer_then_queue(rsp, context_id):
        # The final answer, as a queueing PACS gives it: Success, with what it took on to send.
        rsp.NumberOfCompletedSuboperations = len(files)
        plain_send(rsp, context_id)
        dimse.send_msg = plain_send
        print(f"queued {len(files)} for {ae_title}", flush=True)
        threading.Thread(target=send_later, args=(DESTINATIONS[ae_title], ae_title, originator, message_id, files)).start()

    dimse.send_msg = answer_then_queue
    yield DESTINATIONS[ae_title]
    yield 0  # nothing sent within the C-MOVE itself


def main():
    ae = AE(ae_title="QUEUED")
    ae.add_supported_context(StudyRootQueryRetrieveInformationModelMove)
    print("listening", flush=True)
    ae.start_server(("127.0.0.1", int(sys.argv[1])), evt_handlers=[(evt.EVT_C_MOVE, handle_move)])


if __name__ == "__main__":
    main()
