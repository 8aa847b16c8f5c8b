"""Face detection with five landmarks (CenterFace, an MIT-licensed ONNX model shipped in a PyPI wheel).

The detector runs through OpenCV's DNN module, which accepts any input size divisible by 32, so a frame is
only shrunk to `input_width` and never padded to a fixed square.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.errors import ModelCorrupt, ModelNotFound
from engine.vision._cv import cv2

DEFAULT_FACE_MODEL = "centerface"


@dataclass(frozen=True)
class FaceDetectorOptions:
    """How faces are searched for in a frame."""

    input_width: int = 320  # frames are shrunk to this width before detection (multiple of 32)
    score_threshold: float = 0.5  # heat-map peak that counts as a face
    nms_iou: float = 0.3  # overlap above which two boxes are the same face
    min_face_fraction: float = 0.04  # faces narrower than this share of the frame width are ignored

    def __post_init__(self) -> None:
        if self.input_width < 64 or self.input_width % 32:
            raise ValueError(f"input_width must be a multiple of 32 and at least 64, got {self.input_width}")
        if not 0.0 < self.score_threshold < 1.0:
            raise ValueError(f"score_threshold must be between 0 and 1, got {self.score_threshold}")
        if not 0.0 < self.nms_iou < 1.0:
            raise ValueError(f"nms_iou must be between 0 and 1, got {self.nms_iou}")
        if not 0.0 <= self.min_face_fraction < 1.0:
            raise ValueError(f"min_face_fraction must be in [0, 1), got {self.min_face_fraction}")


@dataclass(frozen=True)
class Face:
    """One detected face in frame pixels: box, confidence and five landmarks."""

    box: tuple[float, float, float, float]  # x1, y1, x2, y2
    score: float
    # left eye, right eye, nose tip, left and right mouth corner (as seen in the image), each (x, y)
    landmarks: tuple[tuple[float, float], ...]

    @property
    def width(self) -> float:
        """Box width in pixels."""
        return self.box[2] - self.box[0]

    def roll_degrees(self) -> float:
        """Tilt of the eye line from horizontal (0 = upright, ±180 = upside down)."""
        (lx, ly), (rx, ry) = self.landmarks[0], self.landmarks[1]
        return math.degrees(math.atan2(ry - ly, rx - lx))

    def yaw_degrees(self) -> float:
        """Head turn left/right estimated from where the nose sits between the eyes (0 = facing the camera)."""
        (lx, ly), (rx, ry), (nx, ny) = self.landmarks[0], self.landmarks[1], self.landmarks[2]
        eye_dx, eye_dy = rx - lx, ry - ly
        eye_distance = math.hypot(eye_dx, eye_dy)
        if eye_distance < 1e-6:
            return 90.0
        # express the nose in a frame whose x axis runs along the eyes, so head roll does not look like yaw
        ux, uy = eye_dx / eye_distance, eye_dy / eye_distance
        mid_x, mid_y = (lx + rx) / 2, (ly + ry) / 2
        along = (nx - mid_x) * ux + (ny - mid_y) * uy
        # the nose tip stands about half an eye distance in front of the eyes: offset = depth * tan(yaw)
        return math.degrees(math.atan2(along, 0.5 * eye_distance))


class FaceDetector(Protocol):
    """Anything that finds faces (with the five landmarks) in a BGR frame."""

    def detect(self, frame_bgr: np.ndarray) -> list[Face]:
        """Faces in the frame, largest first."""
        ...


class CenterFaceDetector:
    """CenterFace through OpenCV DNN: about 10-25 ms per 320-pixel-wide frame on one core."""

    def __init__(self, model_path: Path, options: FaceDetectorOptions | None = None) -> None:
        self.options = options or FaceDetectorOptions()
        model_path = Path(model_path)
        if not model_path.is_file():
            raise ModelNotFound(
                f"face model {model_path} does not exist",
                fix="run `venus models install` (model id 'centerface')",
            )
        try:
            self._net = cv2.dnn.readNetFromONNX(str(model_path))
        except cv2.error as exc:
            raise ModelCorrupt(
                f"face model {model_path} could not be loaded ({str(exc).strip().splitlines()[-1]})",
                fix="delete it and run `venus models install` again",
            ) from exc
        self._outputs = ["537", "538", "539", "540"]  # heat map, box scale, centre offset, landmarks

    @classmethod
    def from_registry(
        cls, model: str = DEFAULT_FACE_MODEL, options: FaceDetectorOptions | None = None
    ) -> CenterFaceDetector:
        """Load the installed model by id (or a path to the .onnx)."""
        from engine.models.registry import resolve

        return cls(resolve(model, "vision"), options)

    def detect(self, frame_bgr: np.ndarray) -> list[Face]:
        """Faces in the frame, largest first."""
        if frame_bgr.ndim == 2:
            frame_bgr = cv2.cvtColor(frame_bgr, cv2.COLOR_GRAY2BGR)
        height, width = frame_bgr.shape[:2]
        in_w = self.options.input_width
        in_h = max(32, int(math.ceil(in_w * height / width / 32)) * 32)
        blob = cv2.dnn.blobFromImage(frame_bgr, 1.0, (in_w, in_h), (0, 0, 0), swapRB=True, crop=False)
        self._net.setInput(blob)
        heat, scale, offset, marks = self._net.forward(self._outputs)
        faces = self._decode(heat[0, 0], scale[0], offset[0], marks[0], (in_h, in_w))
        sx, sy = width / in_w, height / in_h
        result = []
        for face in faces:
            x1, y1, x2, y2 = face.box
            box = (x1 * sx, y1 * sy, x2 * sx, y2 * sy)
            if box[2] - box[0] < self.options.min_face_fraction * width:
                continue
            landmarks = tuple((x * sx, y * sy) for x, y in face.landmarks)
            result.append(Face(box=box, score=face.score, landmarks=landmarks))
        result.sort(key=lambda f: f.width, reverse=True)
        return result

    def _decode(
        self,
        heat: np.ndarray,
        scale: np.ndarray,
        offset: np.ndarray,
        marks: np.ndarray,
        size: tuple[int, int],
    ) -> list[Face]:
        rows, cols = np.nonzero(heat > self.options.score_threshold)
        if rows.size == 0:
            return []
        # every heat-map cell covers 4 input pixels; scale is log(size / 4)
        box_h = np.exp(scale[0, rows, cols]) * 4
        box_w = np.exp(scale[1, rows, cols]) * 4
        centre_y = (rows + offset[0, rows, cols] + 0.5) * 4
        centre_x = (cols + offset[1, rows, cols] + 0.5) * 4
        x1 = np.clip(centre_x - box_w / 2, 0, size[1])
        y1 = np.clip(centre_y - box_h / 2, 0, size[0])
        x2 = np.clip(x1 + box_w, 0, size[1])
        y2 = np.clip(y1 + box_h, 0, size[0])
        scores = heat[rows, cols]
        boxes_xywh = [
            [float(a), float(b), float(c - a), float(d - b)]
            for a, b, c, d in zip(x1, y1, x2, y2, strict=True)
        ]
        keep = cv2.dnn.NMSBoxes(
            boxes_xywh, scores.astype(float).tolist(), self.options.score_threshold, self.options.nms_iou
        )
        faces = []
        for i in np.asarray(keep).reshape(-1):
            # landmarks are stored as (y, x) pairs relative to the box corner, in box units
            points = tuple(
                (
                    float(marks[2 * j + 1, rows[i], cols[i]] * box_w[i] + x1[i]),
                    float(marks[2 * j, rows[i], cols[i]] * box_h[i] + y1[i]),
                )
                for j in range(5)
            )
            faces.append(
                Face(
                    box=(float(x1[i]), float(y1[i]), float(x2[i]), float(y2[i])),
                    score=float(scores[i]),
                    landmarks=points,
                )
            )
        return faces
